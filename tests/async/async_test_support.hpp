// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the async tests: descriptors that close themselves, system-call checks, the
// strategies, and a future's outcome as a value.
#pragma once

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "heddle/core/detail/access.hpp"
#include "test_support.hpp"

namespace heddle_test {

constexpr heddle::strategy all_strategies[] = {heddle::strategy::normal, heddle::strategy::express,
                                               heddle::strategy::short_task, heddle::strategy::asap};

// Polls p every 200 µs until it holds or `limit` has passed; p's last value.
template <class P>
bool eventually(P p, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!p()) {
    if (std::chrono::steady_clock::now() > end) return p();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Timers complete in (deadline, start) order among the timers the engine holds. A test cannot
// make sure every timer is started before the first deadline (a loaded machine can overrun any
// margin), so it checks only what that order defines: timer a completing before timer b, with b's
// key smaller, is wrong when b was started before a's deadline (b was then in the engine's heap when
// a was taken out of it). `order` lists the timers as they completed; `precedes(b, a)` says that
// b's (deadline, start) is smaller than a's; `started_by(i)` is a time the start of i had returned
// by; `deadline(i)` its deadline. Returns the number of wrong pairs (reporting the first five) and
// counts the pairs it could judge.
template <class Precedes, class StartedBy, class Deadline>
int count_misordered(const std::vector<int>& order, Precedes precedes, StartedBy started_by, Deadline deadline,
                     std::uint64_t& judged) {
  int wrong = 0;
  judged = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int a = order[k];
    for (std::size_t j = k + 1; j < order.size(); ++j) {
      const int b = order[j];
      if (started_by(b) >= deadline(a)) continue;  // b may have been started after a left the heap
      ++judged;
      if (precedes(b, a) && wrong++ < 5)
        ADD_FAILURE() << "timer " << a << " completed before timer " << b << ", which has an earlier (deadline, start)";
    }
  }
  return wrong;
}

// True on one of rt's workers.
inline bool on_worker_of(const heddle::runtime& rt) {
  heddle::core_detail::worker* w = heddle::core_detail::current_worker;
  return w && w->core == heddle::core_detail::access::core_of(rt);
}

class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~unique_fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

 private:
  int fd_ = -1;
};

// r, or std::system_error with errno when r < 0.
inline int check_sys(int r, const char* what) {
  if (r < 0) throw std::system_error(errno, std::generic_category(), what);
  return r;
}

// A descriptor number that is certainly not open: far above anything this process opens. Not a
// number just closed: open(2) hands out the lowest free number, so another thread of the process (a
// library's) may take it again before the test uses it, and the test then waits on that file.
inline int not_open_fd() {
  rlimit limit{};
  check_sys(::getrlimit(RLIMIT_NOFILE, &limit), "getrlimit");
  const rlim_t highest = limit.rlim_cur > 15001 ? 15000 : limit.rlim_cur - 1;
  const int fd = check_sys(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, static_cast<int>(highest)), "F_DUPFD");
  ::close(fd);
  return fd;
}

// How a future ended.
enum class outcome { value, cancelled, stopped, other };

inline const char* name(outcome o) {
  switch (o) {
    case outcome::value: return "value";
    case outcome::cancelled: return "operation_cancelled";
    case outcome::stopped: return "task_cancelled";
    case outcome::other: return "another exception";
  }
  return "?";
}

template <class T>
outcome outcome_of(heddle::future<T>& f) {
  try {
    f.get();
    return outcome::value;
  } catch (const heddle::operation_cancelled&) {
    return outcome::cancelled;
  } catch (const heddle::task_cancelled&) {
    return outcome::stopped;
  } catch (...) {
    return outcome::other;
  }
}

// An error code as text: "end_of_file", an errno's name ("EBADF"), or its category and value.
inline std::string describe(const std::error_code& c) {
  if (c == heddle::io::errc::end_of_file) return "end_of_file";
  const char* n = ::strerrorname_np(c.value());
  std::string name = n ? n : "errno " + std::to_string(c.value());
  if (c.category() == std::generic_category()) return name;
  return std::string(c.category().name()) + " category: " + name;
}

// Forces f: "ok", "end_of_file", an errno name ("EBADF"), "operation_cancelled", "task_cancelled",
// or a description of anything else.
template <class T>
std::string outcome_text(heddle::future<T>& f) {
  try {
    f.get();
    return "ok";
  } catch (const heddle::operation_cancelled&) {
    return "operation_cancelled";
  } catch (const heddle::task_cancelled&) {
    return "task_cancelled";
  } catch (const std::system_error& e) {
    return describe(e.code());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-std exception";
  }
}

// A sequence of steps driven by continuations; join() follows the chain from the test thread and
// returns "finished" or the outcome of the step that failed. Each step makes its successor's
// future inside step(), under the lock: a successor already running on another thread waits for
// it, so the newest step is the one kept. A short_task successor of an operation that completed at
// once runs inline, inside make(), and steps again on this thread (hence the recursive lock): the
// step numbers keep the newest future then too.
class chain {
 public:
  template <class Make>
  void step(Make&& make) {
    std::lock_guard lock(m_);
    const std::uint64_t seq = ++made_;
    heddle::future<void> f = make();
    if (seq > stored_) {
      stored_ = seq;
      tail_ = std::move(f);
    }
  }
  void finish() {
    std::lock_guard lock(m_);
    finished_ = true;
  }
  std::string join() {
    for (;;) {
      heddle::future<void> f;
      {
        std::lock_guard lock(m_);
        if (finished_ && !tail_.valid()) return "finished";
        f = std::move(tail_);
      }
      if (!f.valid()) return "chain stalled: no next step and not finished";
      std::string o = outcome_text(f);
      if (o != "ok") return o;
    }
  }

 private:
  std::recursive_mutex m_;
  heddle::future<void> tail_;
  std::uint64_t made_ = 0, stored_ = 0;
  bool finished_ = false;
};

}  // namespace heddle_test
