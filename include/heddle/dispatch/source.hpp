// SPDX-License-Identifier: Apache-2.0
// heddle::source: a handler that runs on a serial queue whenever an event happens: a descriptor
// became readable or writable, or a periodic timer fired. Nothing waits on a thread: the runtime's
// fd and timer engines watch, and hand the handler to the queue.
//
// Contract:
// - read/write: the handler runs on q when fd is readable (data, the end of the stream or an error
//   waits there) or writable. The next wait starts once the handler has returned, so a handler
//   that consumes what is there runs once per batch; one that leaves it runs again at once. fd
//   must be an open descriptor that epoll accepts (a pipe, a socket, an eventfd...): otherwise
//   (not open, a regular file, a directory) the call throws std::system_error. The source does not read, write or close
//   fd.
// - timer: the handler runs on q every `interval`, the first time one interval from now, at
//   deadlines start + k * interval. Deadlines that pass while the handler waits in the queue or
//   runs are coalesced into one call; a handler that takes a std::uint64_t gets their number.
// - cancel() stops the source: no handler starts after it returns, except one already running on
//   q. The returned future is ready once the source holds nothing (no wait is pending on fd, which
//   may then be closed, and no handler will run); its continuation may close fd. Destroying the
//   source cancels it without waiting.
// - The handler's exceptions go to q's error handler (serial_queue.hpp); so does a failing wait
//   (a descriptor that is not open when the next wait starts), which stops the source. Cancel the
//   source, and wait for cancel()'s future, before closing fd: epoll forgets a descriptor closed
//   while it is watched, and the source would then wait until cancelled.
// - Thread safety: read(), write() and timer() may be called from any thread; a source's cancel()
//   and cancelled() from any thread, concurrently with each other and with its handler; the
//   source object is moved, assigned or destroyed by its owner only, while no other thread uses it.
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/dispatch/serial_queue.hpp"

namespace heddle {

namespace dispatch_detail {

class source_state;
HEDDLE_EXPORT future<void> cancel_source(source_state* s);
HEDDLE_EXPORT void drop_source(source_state* s) noexcept;
HEDDLE_EXPORT bool source_cancelled(const source_state* s) noexcept;

class HEDDLE_EXPORT source_state {
 public:
  enum class kind : std::uint8_t { readable, writable, timer };
  virtual ~source_state() = default;
  // Calls the handler; `ticks` is 1 for a descriptor, the coalesced count for a timer.
  virtual void invoke(std::uint64_t ticks) = 0;

 protected:
  source_state() = default;

 private:
  friend struct source_ops;
  friend source_state* start_source(source_state*, kind, int, std::chrono::nanoseconds,
                                    const class heddle::serial_queue&);
  friend future<void> cancel_source(source_state* s);
  friend void drop_source(source_state* s) noexcept;
  friend bool source_cancelled(const source_state* s) noexcept;
  struct control;
  control* c_ = nullptr;  // src/dispatch/source.cpp
};

// Starts watching; the state belongs to the returned handle (deleted if this throws).
HEDDLE_EXPORT source_state* start_source(source_state* s, source_state::kind k, int fd,
                                         std::chrono::nanoseconds interval, const serial_queue& q);

template <class H>
class source_with final : public source_state {
 public:
  template <class G>
  explicit source_with(G&& g) : handler_(std::forward<G>(g)) {}
  void invoke(std::uint64_t ticks) override {
    if constexpr (std::is_invocable_v<H&, std::uint64_t>) handler_(ticks);
    else handler_();
  }

 private:
  H handler_;
};

}  // namespace dispatch_detail

class [[nodiscard]] source {
  // The interval in nanoseconds; one past the range (hours::max()) means "never".
  template <class Rep, class Period>
  static std::chrono::nanoseconds saturated_ns(std::chrono::duration<Rep, Period> d) {
    if (d <= d.zero()) return std::chrono::nanoseconds::zero();  // refused by start_source
    using wide = std::chrono::duration<long double, std::nano>;
    if (wide(d) >= wide(std::chrono::nanoseconds::max())) return std::chrono::nanoseconds::max();
    return std::chrono::ceil<std::chrono::nanoseconds>(d);
  }

 public:
  // Start watching, from any thread (thread-safe); they throw what start_source throws (above).
  template <class H>
  static source read(int fd, const serial_queue& q, H&& handler) {
    return source(
        dispatch_detail::start_source(new dispatch_detail::source_with<std::decay_t<H>>(std::forward<H>(handler)),
                                      dispatch_detail::source_state::kind::readable, fd, {}, q));
  }
  template <class H>
  static source write(int fd, const serial_queue& q, H&& handler) {
    return source(
        dispatch_detail::start_source(new dispatch_detail::source_with<std::decay_t<H>>(std::forward<H>(handler)),
                                      dispatch_detail::source_state::kind::writable, fd, {}, q));
  }
  template <class Rep, class Period, class H>
  static source timer(std::chrono::duration<Rep, Period> interval, const serial_queue& q, H&& handler) {
    return source(
        dispatch_detail::start_source(new dispatch_detail::source_with<std::decay_t<H>>(std::forward<H>(handler)),
                                      dispatch_detail::source_state::kind::timer, -1, saturated_ns(interval), q));
  }

  source() noexcept = default;
  source(source&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  source& operator=(source&& o) noexcept {
    if (this != &o) {
      if (s_) dispatch_detail::drop_source(s_);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~source() {
    if (s_) dispatch_detail::drop_source(s_);
  }

  // Stops the source; the future is ready once it holds nothing (see above). Any number of calls.
  // Thread-safe, never waits: any thread, its own handler included.
  future<void> cancel() {
    if (!s_) throw std::logic_error("heddle::source::cancel: the source is empty (default-constructed or moved from)");
    return dispatch_detail::cancel_source(s_);
  }
  // Whether cancel() was called or the source dropped (or it is empty). Thread-safe.
  bool cancelled() const noexcept { return !s_ || dispatch_detail::source_cancelled(s_); }

 private:
  explicit source(dispatch_detail::source_state* s) noexcept : s_(s) {}
  dispatch_detail::source_state* s_ = nullptr;
};

}  // namespace heddle
