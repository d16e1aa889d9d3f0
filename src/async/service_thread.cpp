// SPDX-License-Identifier: Apache-2.0
#include "service_thread.hpp"

#include <pthread.h>

#include <cstdio>
#include <exception>

#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/trace.hpp"

namespace heddle::async_detail {

service_thread::~service_thread() {
  // A thread still running here would run a destroyed engine: the engine's destructor forgot stop().
  for (const std::thread& t : threads_)
    if (t.joinable()) std::terminate();
}

void service_thread::start_threads(unsigned count) {
  threads_.reserve(count);
  try {
    for (unsigned i = 0; i < count; ++i) threads_.emplace_back([this] { thread_main(); });
  } catch (...) {
    stop();
    throw;
  }
}

void service_thread::thread_main() noexcept {
  pthread_setname_np(pthread_self(), os_name_);
  heddle::trace::set_thread_name(trace_name_);
  try {
    run();
  } catch (...) {
    std::fprintf(stderr, "heddle: the %s thread failed: %s\n", trace_name_,
                 core_detail::exception_text(std::current_exception(), /*with_type=*/true).c_str());
    std::terminate();
  }
}

void service_thread::stop() noexcept {
  if (stop_called_.exchange(true, std::memory_order_acq_rel)) return;
  request_stop();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  fail_pending();
}

}  // namespace heddle::async_detail
