// Helpers shared by the async tests: descriptors that close themselves, system-call checks, the
// strategies, and a future's outcome as a value.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "test_support.hpp"

namespace heddle_test {

constexpr heddle::strategy all_strategies[] = {heddle::strategy::normal, heddle::strategy::express,
                                               heddle::strategy::short_task, heddle::strategy::asap};

// True on one of rt's workers.
inline bool on_worker_of(const heddle::runtime& rt) {
  heddle::detail::worker* w = heddle::detail::current_worker;
  return w && w->core == rt.core();
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

}  // namespace heddle_test
