// An epoll instance with an eventfd in it: what the fd and process engines' service threads sleep
// on, and how stop() wakes them.
#pragma once

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace heddle::detail {

class epoll_set {
 public:
  // `wake_tag`: what epoll_wait reports for a wake() (a value no watched source uses).
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

  int fd() const noexcept { return epoll_; }
  // Makes epoll_wait report the wake tag (level-triggered: until the process ends).
  void wake() noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = write(wake_, &one, sizeof one);
  }

 private:
  int epoll_ = -1;
  int wake_ = -1;
};

}  // namespace heddle::detail
