// SPDX-License-Identifier: Apache-2.0
// What every async engine with threads of its own shares (the fd, timer, process and MPI engines,
// the io_uring and I/O-thread file backends): starting its threads, stopping them once, and then
// completing what is still pending with task_cancelled. Each engine keeps its own queue, lock and
// "stopping" flag (start() looks at that flag under that lock, so nothing is queued after the
// final sweep); the base fixes the order of the steps and the rules below.
//
// Contract:
// - start_threads(): once, at the end of the engine's constructor (the threads run the engine's
//   members and virtual functions at once). If a thread cannot be started, the ones already started
//   are stopped as by stop(), and the std::system_error is thrown on.
// - stop(): from any thread but the service threads themselves, any number of times; the first
//   call does the work, later ones (concurrent ones included) return at once. The first call:
//   1. request_stop(): the engine marks itself stopping where start() looks and wakes its threads;
//   2. joins the threads; they finish what they are completing (an io_uring backend waits for the
//      operations the kernel still holds) and leave the rest queued;
//   3. fail_pending(): on the calling thread, the engine completes everything still queued with
//      stopped_error() (task_cancelled), and waits for cancellations completing operations elsewhere.
//   The runtime calls it (runtime_service::stop) once its workers are gone; the engine's destructor
//   calls it too, first, because the threads use members that die before this base does.
// - run(): the threads' body, from start until it sees the engine stopping. An exception that
//   escapes it is a bug in the engine: the thread prints "heddle: the <name> thread failed: <what>"
//   on stderr and calls std::terminate(), as std::thread would, but saying which thread.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "heddle/core/export.hpp"

namespace heddle::async_detail {

// Exported: the MPI engine lives in a library of its own (heddle::mpi).
class HEDDLE_EXPORT service_thread {
 public:
  service_thread(const service_thread&) = delete;
  service_thread& operator=(const service_thread&) = delete;

  void stop() noexcept;

 protected:
  // `os_name`: the thread's name for the system (pthread_setname_np, 15 characters at most);
  // `trace_name`: its name in traces. Both literals.
  service_thread(const char* os_name, const char* trace_name) noexcept : os_name_(os_name), trace_name_(trace_name) {}
  virtual ~service_thread();  // the threads must have been joined (stop())

  void start_threads(unsigned count = 1);

  virtual void run() = 0;
  virtual void request_stop() noexcept = 0;
  virtual void fail_pending() noexcept {}

 private:
  void thread_main() noexcept;

  const char* os_name_;
  const char* trace_name_;
  std::atomic<bool> stop_called_{false};
  std::vector<std::thread> threads_;
};

}  // namespace heddle::async_detail
