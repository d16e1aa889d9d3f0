// SPDX-License-Identifier: Apache-2.0
// Sources: a chain of waits (io::readable/writable or a timer, with the source's cancellation
// token) whose completions hand items to the source's serial queue. At any time a source has
// exactly one thing outstanding: an armed wait, or (for a descriptor) the handler item that arms
// the next one. Whatever ends the chain (a cancellation, a failure, a stopping runtime) queues a
// `finish` item behind the handler items, so the cancel() futures are ready only once no handler
// can run any more.
#include "heddle/dispatch/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "heddle/async/detail/deadline.hpp"
#include "heddle/async/io.hpp"
#include "heddle/async/promise.hpp"
#include "heddle/async/timer.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/completion_hook.hpp"
#include "heddle/dispatch/detail/access.hpp"

namespace heddle::dispatch_detail {

struct source_state::control {
  std::atomic<std::uint32_t> refs{1};  // the handle, the armed wait, each queued item
  std::atomic<bool> cancelled{false};
  cancellation_source stop;  // cancels the armed wait
  queue_state* q;            // holds a reference
  kind what;
  int fd;
  std::chrono::nanoseconds interval;
  std::chrono::steady_clock::time_point next;  // the armed timer's deadline
  std::atomic<std::uint64_t> ticks{0};         // timer deadlines passed and not yet handled

  std::mutex m;  // guards the two below
  bool stopped = false;
  std::vector<promise<void>> on_stop;
};

struct source_ops {
  using control = source_state::control;
  using kind = source_state::kind;
  static control& c(source_state* s) noexcept { return *s->c_; }

  static void retain(source_state* s) noexcept { c(s).refs.fetch_add(1, std::memory_order_relaxed); }
  static void release(source_state* s) noexcept {
    if (c(s).refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    heddle::dispatch_detail::release(c(s).q);
    delete s->c_;
    delete s;
  }

  // What a queued item does; the item holds a reference.
  enum class step : std::uint8_t { handle, finish, fail };
  struct item final : queue_item {
    item(source_state* src, step w, std::exception_ptr e) noexcept
        : queue_item(&vtable), s(src), what(w), error(std::move(e)) {}
    source_state* s;
    step what;
    std::exception_ptr error;  // for `fail`

    static void run(queue_item* i, queue_state* q) noexcept {
      auto* self = static_cast<item*>(i);
      source_state* s = self->s;
      const step what = self->what;
      std::exception_ptr e = std::move(self->error);
      core_detail::free_record(self);
      switch (what) {
        case step::handle: handle(s, q); break;
        case step::fail: report_item_error(q, std::move(e)); [[fallthrough]];
        case step::finish: finish(s); break;
      }
      release(s);
    }
    static void discard(queue_item* i) noexcept {
      // The runtime stopped: nothing more will run; the cancel() futures are still made ready.
      auto* self = static_cast<item*>(i);
      source_state* s = self->s;
      const step what = self->what;
      core_detail::free_record(self);
      if (what != step::handle || c(s).what != kind::timer) finish(s);
      release(s);
    }
    static constexpr queue_item_vtable vtable{&run, &discard};
  };

  static void push(source_state* s, step what, std::exception_ptr e = nullptr) noexcept {
    retain(s);
    try {
      enqueue(c(s).q, core_detail::make_record<item>(s, what, std::move(e)));
    } catch (...) {
      core_detail::fatal_unrecoverable("out of memory while queueing a handler", "heddle::source");
    }
  }

  // On q: the handler, then (for a descriptor) the next wait.
  static void handle(source_state* s, queue_state* q) noexcept {
    control& k = c(s);
    if (k.what == kind::timer) {
      const std::uint64_t n = k.ticks.exchange(0, std::memory_order_acq_rel);
      if (n && !k.cancelled.load(std::memory_order_acquire)) invoke(s, q, n);
      return;
    }
    if (!k.cancelled.load(std::memory_order_acquire)) invoke(s, q, 1);
    if (k.cancelled.load(std::memory_order_acquire)) return finish(s);
    arm(s);
  }

  static void invoke(source_state* s, queue_state* q, std::uint64_t ticks) noexcept {
    try {
      s->invoke(ticks);
    } catch (...) {
      report_item_error(q, std::current_exception());
    }
  }

  // Once per source: the chain has ended and no handler runs any more.
  static void finish(source_state* s) noexcept {
    control& k = c(s);
    k.cancelled.store(true, std::memory_order_release);
    std::vector<promise<void>> waiting;
    {
      std::lock_guard lock(k.m);
      k.stopped = true;
      waiting.swap(k.on_stop);
    }
    for (promise<void>& p : waiting) p.set_value();
  }

  struct wait_hook final : core_detail::completion_hook {
    explicit wait_hook(source_state* src) noexcept : core_detail::completion_hook(&done), s(src) {}
    source_state* s;

    static void done(core_detail::completion_hook* h, std::exception_ptr error) noexcept {
      source_state* s = static_cast<wait_hook*>(h)->s;
      core_detail::free_record(static_cast<wait_hook*>(h));
      on_wait_done(s, std::move(error));
      release(s);  // the armed wait's reference
    }
  };

  // Starts the next wait; on failure (a stopping runtime), ends the chain.
  static void arm(source_state* s) noexcept {
    control& k = c(s);
    retain(s);
    try {
      auto* h = core_detail::make_record<wait_hook>(s);
      core_detail::future_state<void>* f;
      try {
        const cancellation_token token = k.stop.token();
        if (k.what == kind::timer) f = async_detail::start_timer(k.q->core, k.next, token);
        else if (k.what == kind::readable) f = async_detail::readable(k.q->core, k.fd, token);
        else f = async_detail::writable(k.q->core, k.fd, token);
      } catch (...) {
        core_detail::free_record(h);
        throw;
      }
      h->hook(f);
    } catch (...) {
      push(s, step::finish);
      release(s);
    }
  }

  static bool is_cancellation(const std::exception_ptr& e) noexcept {
    try {
      std::rethrow_exception(e);
    } catch (const task_cancelled&) {
      return true;  // operation_cancelled too: the source was cancelled, or the runtime stops
    } catch (...) {
      return false;
    }
  }

  static void on_wait_done(source_state* s, std::exception_ptr error) noexcept {
    control& k = c(s);
    if (error) {
      const step next = is_cancellation(error) ? step::finish : step::fail;
      return push(s, next, std::move(error));
    }
    if (k.what != kind::timer) return push(s, step::handle);
    // A timer: count the deadlines passed (more than one if the engine ran late), hand them to the
    // queue unless a handler item is already waiting there, and arm the next deadline.
    const auto [passed, next] = async_detail::next_deadline(k.next, k.interval, std::chrono::steady_clock::now());
    k.next = next;
    if (k.ticks.fetch_add(passed, std::memory_order_acq_rel) == 0) push(s, step::handle);
    if (k.cancelled.load(std::memory_order_acquire)) return push(s, step::finish);
    arm(s);
  }
};

source_state* start_source(source_state* s, source_state::kind what, int fd, std::chrono::nanoseconds interval,
                           const serial_queue& q) {
  try {
    if (!q.valid()) throw std::logic_error("heddle::source: the serial_queue handle was moved from");
    if (what == source_state::kind::timer) {
      if (interval <= interval.zero())
        throw std::invalid_argument("heddle::source::timer: the interval must be positive");
    } else {
      struct stat st;
      if (fd < 0 || ::fstat(fd, &st) < 0)
        throw std::system_error(fd < 0 ? EBADF : errno, std::generic_category(),
                                "heddle::source: descriptor " + std::to_string(fd) + " is not open");
      // epoll refuses regular files and directories (they are always ready): a source on one would
      // call its handler without end.
      if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        throw std::system_error(
            EPERM, std::generic_category(),
            "heddle::source: descriptor " + std::to_string(fd) +
                " is a regular file or a directory, which is always ready (read it with io::pread)");
    }
    s->c_ = new source_state::control;
  } catch (...) {
    delete s;
    throw;
  }
  source_state::control& k = *s->c_;
  k.q = access::state_of(q);
  retain(k.q);
  k.what = what;
  k.fd = fd;
  k.interval = interval;
  if (what == source_state::kind::timer) k.next = async_detail::deadline_after(interval);  // saturated: never
  source_ops::arm(s);
  return s;
}

future<void> cancel_source(source_state* s) {
  source_state::control& k = *s->c_;
  promise<void> p;
  future<void> f = p.get_future();
  {
    std::lock_guard lock(k.m);
    if (!k.stopped) k.on_stop.push_back(std::move(p));
  }
  if (p.valid()) p.set_value();  // already stopped
  k.cancelled.store(true, std::memory_order_release);
  k.stop.cancel();
  return f;
}

void drop_source(source_state* s) noexcept {
  source_state::control& k = *s->c_;
  k.cancelled.store(true, std::memory_order_release);
  k.stop.cancel();
  source_ops::release(s);
}

bool source_cancelled(const source_state* s) noexcept { return s->c_->cancelled.load(std::memory_order_acquire); }

}  // namespace heddle::dispatch_detail
