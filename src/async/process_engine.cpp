// SPDX-License-Identifier: Apache-2.0
// The process engine of one runtime: a child's pidfd in an epoll set, and one service thread that
// reaps each child as its pidfd becomes readable (the child exited).
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <unordered_set>

#include "heddle/async/detail/epoll_set.hpp"
#include "heddle/async/process.hpp"
#include "op_state.hpp"
#include "service_thread.hpp"

namespace heddle::async_detail {

namespace {

int open_pidfd(pid_t pid) noexcept { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::exception_ptr wait_process_error(int err, const char* what) {
  return std::make_exception_ptr(std::system_error(err, std::generic_category(), what));
}

// The waitpid(2)-style status of an exited child, from waitid's siginfo.
int wait_status(const siginfo_t& info) noexcept {
  switch (info.si_code) {
    case CLD_EXITED: return (info.si_status & 0xff) << 8;
    case CLD_KILLED: return info.si_status & 0x7f;
    case CLD_DUMPED: return (info.si_status & 0x7f) | 0x80;
    default: return 0;
  }
}

struct process_op final : op_state<int> {
  explicit process_op(int fd) noexcept : op_state<int>(&op_vtable<process_op>::table, "process"), pidfd(fd) {}
  int pidfd;

  // Reaps the child if it has exited; false if it is still running.
  bool try_reap() noexcept {
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG) < 0) {
      const int err = errno;
      if (err == EINTR) return try_reap();
      close(pidfd);
      fail(wait_process_error(err, "heddle::io::wait_process: waitid"));
      return true;
    }
    if (info.si_pid == 0) return false;  // still running
    close(pidfd);
    succeed(wait_status(info));
    return true;
  }
};

class process_engine final : public core_detail::runtime_service, private service_thread {
 public:
  explicit process_engine(core_detail::runtime_core*)
      : service_thread("heddle-process", "process engine"), epoll_(epoll_data_t{.ptr = nullptr}) {
    start_threads();
  }
  ~process_engine() override { stop(); }

  core_detail::future_state<int>* start(pid_t pid) {
    const int pidfd = open_pidfd(pid);
    if (pidfd < 0) return failed<int>(wait_process_error(errno, "heddle::io::wait_process: pidfd_open"));
    auto* op = core_detail::make_record<process_op>(pidfd);
    if (op->try_reap()) return op;  // already exited (or not our child)
    std::unique_lock lock(m_);
    if (stopping_) {
      lock.unlock();
      close(pidfd);
      op->fail(stopped_error());
      return op;
    }
    if (!epoll_.add(pidfd, EPOLLIN | EPOLLONESHOT, epoll_data_t{.ptr = op})) {
      const int err = errno;
      lock.unlock();
      close(pidfd);
      op->fail(wait_process_error(err, "heddle::io::wait_process: epoll_ctl"));
      return op;
    }
    pending_.insert(op);
    return op;
  }

  void stop() noexcept override { service_thread::stop(); }

 private:
  void request_stop() noexcept override {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    epoll_.wake();
  }

  // The children keep running; their futures are cancelled, and they are left for the program (or
  // init) to reap.
  void fail_pending() noexcept override {
    for (process_op* op : pending_) {
      close(op->pidfd);
      op->fail(stopped_error());
    }
    pending_.clear();
  }

  void run() override {
    constexpr int max_events = 64;
    epoll_event events[max_events];
    for (;;) {
      const int n = epoll_.wait(events, -1);
      for (int i = 0; i < n; ++i) {
        auto* op = static_cast<process_op*>(events[i].data.ptr);
        if (!op) {
          if (stopping()) return;
          continue;
        }
        {
          std::lock_guard lock(m_);
          // The pidfd leaves the set before it is closed (by try_reap), so its number can be reused.
          epoll_.remove(op->pidfd);
          pending_.erase(op);
        }
        if (!op->try_reap()) {
          // Readable but not reapable yet (should not happen): watch again.
          std::lock_guard lock(m_);
          epoll_.add(op->pidfd, EPOLLIN | EPOLLONESHOT, epoll_data_t{.ptr = op});
          pending_.insert(op);
        }
      }
    }
  }
  bool stopping() {
    std::lock_guard lock(m_);
    return stopping_;
  }

  epoll_set epoll_;  // woken with data.ptr == nullptr by stop()
  std::mutex m_;
  bool stopping_ = false;
  std::unordered_set<process_op*> pending_;
};

}  // namespace

heddle::core_detail::future_state<int>* wait_process(heddle::core_detail::runtime_core* core, pid_t pid) {
  if (pid <= 0) return failed<int>(wait_process_error(EINVAL, "heddle::io::wait_process: pid must be positive"));
  try {
    return engine_of<process_engine>(core).start(pid);
  } catch (const task_cancelled&) {
    return failed<int>(std::current_exception());
  }
}

}  // namespace heddle::async_detail
