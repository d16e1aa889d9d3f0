// SPDX-License-Identifier: Apache-2.0
// heddle's one epoll wrapper: an epoll instance with an eventfd in it, so that another thread can
// wake whoever waits. The fd and process engines' service threads sleep on one (stop() wakes them);
// the active messages' tcp transport's receiver sleeps on one (a session's shutdown wakes it).
// Offered to the layers above (cmake/check_layer_includes.cmake); only compiled code includes it,
// so it is not installed. Every call is one system call, none allocates.
#pragma once

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <span>
#include <system_error>

namespace heddle::async_detail {

class epoll_set {
 public:
  // `wake_tag`: what wait() reports for a wake() (a value no watched descriptor uses). Throws
  // std::system_error when the kernel refuses the epoll instance or the eventfd.
  explicit epoll_set(epoll_data_t wake_tag) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) throw std::system_error(errno, std::generic_category(), "heddle: epoll_create1");
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data = wake_tag;
    if (wake_ < 0 || epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev) < 0) {
      const int err = errno;
      if (wake_ >= 0) close(wake_);
      close(epoll_);
      throw std::system_error(err, std::generic_category(), "heddle: eventfd");
    }
  }
  ~epoll_set() {
    close(wake_);
    close(epoll_);
  }
  epoll_set(const epoll_set&) = delete;
  epoll_set& operator=(const epoll_set&) = delete;

  // Watches `fd` for `events` (EPOLLIN, EPOLLOUT, EPOLLONESHOT, ...), reported with `data`;
  // changes what an added one is watched for; stops watching it (before it is closed, so that its
  // number may be reused). False with errno set where epoll_ctl fails (EEXIST, ENOENT, EBADF, ...).
  bool add(int fd, std::uint32_t events, epoll_data_t data) noexcept {
    return control(EPOLL_CTL_ADD, fd, events, data);
  }
  bool modify(int fd, std::uint32_t events, epoll_data_t data) noexcept {
    return control(EPOLL_CTL_MOD, fd, events, data);
  }
  bool remove(int fd) noexcept { return epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr) == 0; }

  // Waits until something watched is ready, a wake() is pending, or `timeout_ms` passes (-1:
  // forever); fills `events` and returns how many, 0 on timeout, -1 with errno set (EINTR).
  int wait(std::span<epoll_event> events, int timeout_ms) noexcept {
    return epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout_ms);
  }

  // Makes wait() report the wake tag, from any thread, until clear_wake() (level-triggered: a
  // stop() that never clears it wakes every later wait() at once).
  void wake() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = write(wake_, &one, sizeof one);
  }
  // Takes back the wakes so far (the waiting thread, once it saw the wake tag).
  void clear_wake() noexcept {
    std::uint64_t count;
    [[maybe_unused]] const ssize_t r = read(wake_, &count, sizeof count);
  }

 private:
  bool control(int op, int fd, std::uint32_t events, epoll_data_t data) noexcept {
    epoll_event ev{};
    ev.events = events;
    ev.data = data;
    return epoll_ctl(epoll_, op, fd, &ev) == 0;
  }

  int epoll_ = -1;
  int wake_ = -1;
};

}  // namespace heddle::async_detail
