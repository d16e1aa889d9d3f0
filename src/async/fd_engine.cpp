// SPDX-License-Identifier: Apache-2.0
#include "fd_engine.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <vector>

#include "heddle/core/detail/access.hpp"

namespace heddle::async_detail {

// One descriptor's waiting operations, per direction, in start order.
struct fd_engine::fd_entry {
  std::mutex m;
  stream_op* head[2] = {nullptr, nullptr};
  stream_op* tail[2] = {nullptr, nullptr};
  std::uint32_t armed = 0;  // the events epoll will report next (0 once a one-shot event fired)
  bool registered = false;  // added to the epoll set (it may since have been closed)

  bool empty(int dir) const noexcept { return head[dir] == nullptr; }
  void push(stream_op* op) noexcept {
    const int d = op->dir;
    op->prev = tail[d];
    op->next = nullptr;
    if (tail[d]) tail[d]->next = op;
    else head[d] = op;
    tail[d] = op;
    op->queued = true;
  }
  void unlink(stream_op* op) noexcept {
    const int d = op->dir;
    if (op->prev) op->prev->next = op->next;
    else head[d] = op->next;
    if (op->next) op->next->prev = op->prev;
    else tail[d] = op->prev;
    op->prev = op->next = nullptr;
    op->queued = false;
  }
  std::uint32_t wanted() const noexcept {
    return (head[stream_op::in] ? EPOLLIN | EPOLLRDHUP : 0u) | (head[stream_op::out] ? EPOLLOUT : 0u);
  }
};

void stream_op::publish() noexcept {
  if (token) token->remove(&hook);
  trace->end([this]() noexcept { state->complete(); });  // the record may be gone now
}

fd_engine::fd_engine(core_detail::runtime_core*)
    : service_thread("heddle-fd", "fd engine"),
      epoll_(epoll_data_t{.fd = -1}),
      chunks_(new std::atomic<fd_entry*>[num_chunks]) {
  for (int i = 0; i < num_chunks; ++i) chunks_[i].store(nullptr, std::memory_order_relaxed);
  start_threads();
}

fd_engine::~fd_engine() {
  stop();
  for (int i = 0; i < num_chunks; ++i) delete[] chunks_[i].load(std::memory_order_relaxed);
}

fd_engine::fd_entry* fd_engine::entry(int fd) {
  if (fd < 0 || fd >= (num_chunks << chunk_bits)) return nullptr;
  std::atomic<fd_entry*>& slot = chunks_[fd >> chunk_bits];
  fd_entry* chunk = slot.load(std::memory_order_acquire);
  if (!chunk) [[unlikely]] {
    std::lock_guard lock(chunks_m_);
    chunk = slot.load(std::memory_order_acquire);
    if (!chunk) {
      chunk = new fd_entry[std::size_t{1} << chunk_bits];
      slot.store(chunk, std::memory_order_release);
    }
  }
  return &chunk[fd & ((1 << chunk_bits) - 1)];
}

bool fd_engine::arm(fd_entry& e) noexcept {
  const std::uint32_t want = e.wanted();
  if (want == 0 || (e.armed & want) == want) return true;
  const std::uint32_t events = want | EPOLLONESHOT;
  // The queue holds the descriptor number; the same number may name a new file since it was added.
  const int fd = (e.head[0] ? e.head[0] : e.head[1])->fd;
  const epoll_data_t data{.fd = fd};
  bool ok = e.registered ? epoll_.modify(fd, events, data) : epoll_.add(fd, events, data);
  if (!ok && errno == ENOENT) ok = epoll_.add(fd, events, data);
  else if (!ok && errno == EEXIST) ok = epoll_.modify(fd, events, data);
  if (!ok) return false;
  e.registered = true;
  e.armed = want;
  return true;
}

void fd_engine::start(stream_op* op, const cancellation_token& token) noexcept {
  op->engine = this;
  fd_entry* e = entry(op->fd);
  if (!e) {
    if (op->attempt(op) == stream_op::outcome::would_block)
      op->store_error(op, std::make_exception_ptr(std::system_error(EBADF, std::generic_category(),
                                                                    "heddle::io: descriptor out of range")));
    return op->publish();
  }
  std::unique_lock lock(e->m);
  if (stopping_.load(std::memory_order_relaxed)) {
    lock.unlock();
    op->store_error(op, stopped_error());
    return op->publish();
  }
  // Only when nothing waits before it: operations on one descriptor and direction keep their order.
  if (e->empty(op->dir) && op->attempt(op) == stream_op::outcome::done) {
    lock.unlock();
    return op->publish();
  }
  e->push(op);
  if (!arm(*e)) {
    const int err = errno;
    e->unlink(op);
    lock.unlock();
    op->store_error(op,
                    std::make_exception_ptr(std::system_error(err, std::generic_category(), "heddle::io: epoll_ctl")));
    return op->publish();
  }
  // Registered under the descriptor's lock, so a racing cancellation finds it queued (a hook fires
  // outside the token's lock: this order cannot deadlock).
  if (core_detail::cancel_state* c = core_detail::access::state_of(token)) {
    op->hook.fire = &on_cancel;
    op->hook.op = op;
    if (c->add(&op->hook)) {
      op->token = c;
      op->token_owner = token;
    } else {
      e->unlink(op);
      lock.unlock();
      op->store_error(op, cancelled_error());
      return op->publish();
    }
  }
}

void fd_engine::on_cancel(core_detail::cancel_hook* h) noexcept {
  stream_op* op = static_cast<op_cancel_hook<stream_op>*>(h)->op;
  fd_entry* e = op->engine->entry(op->fd);
  fd_engine* engine = op->engine;
  bool won;
  {
    std::lock_guard lock(e->m);
    won = op->queued;
    if (won) {
      e->unlink(op);
      engine->cancelling_.enter();
    }
  }
  h->finish_firing();
  if (won) {
    op->token = nullptr;  // the hook is already off the token's list
    op->store_error(op, cancelled_error());
    op->publish();
    engine->cancelling_.leave();
  }
}

void fd_engine::on_ready(int fd, std::uint32_t events) noexcept {
  fd_entry* e = entry(fd);
  if (!e) return;
  std::vector<stream_op*>& done = done_;
  {
    std::lock_guard lock(e->m);
    e->armed = 0;  // one-shot: disarmed by this event
    const bool error = events & (EPOLLERR | EPOLLHUP);
    for (int d : {0, 1}) {
      if (!error && !(events & (d == 0 ? EPOLLIN | EPOLLRDHUP : EPOLLOUT))) continue;
      while (stream_op* op = e->head[d]) {
        if (op->attempt(op) == stream_op::outcome::would_block) break;
        e->unlink(op);
        done.push_back(op);
      }
    }
    if (!arm(*e)) {
      // Cannot wait any longer (the descriptor was closed under its operations): fail them all.
      const int err = errno;
      for (int d : {0, 1})
        while (stream_op* op = e->head[d]) {
          e->unlink(op);
          op->store_error(op, std::make_exception_ptr(std::system_error(err, std::generic_category(),
                                                                        "heddle::io: epoll_ctl")));
          done.push_back(op);
        }
    }
  }
  for (stream_op* op : done) op->publish();
  done.clear();
}

void fd_engine::run() {
  constexpr int max_events = 256;
  epoll_event events[max_events];
  while (!stopping_.load(std::memory_order_acquire)) {
    const int n = epoll_.wait(events, -1);
    for (int i = 0; i < n; ++i)
      if (events[i].data.fd >= 0) on_ready(events[i].data.fd, events[i].events);
  }
}

void fd_engine::request_stop() noexcept {
  stopping_.store(true, std::memory_order_release);
  epoll_.wake();
}

// Whatever still waits completes as cancelled by the stop.
void fd_engine::fail_pending() noexcept {
  std::vector<stream_op*> pending;
  for (int c = 0; c < num_chunks; ++c) {
    fd_entry* chunk = chunks_[c].load(std::memory_order_acquire);
    if (!chunk) continue;
    for (std::size_t i = 0; i < (std::size_t{1} << chunk_bits); ++i) {
      fd_entry& e = chunk[i];
      std::lock_guard lock(e.m);
      for (int d : {0, 1})
        while (stream_op* op = e.head[d]) {
          e.unlink(op);
          pending.push_back(op);
        }
    }
  }
  for (stream_op* op : pending) {
    op->store_error(op, stopped_error());
    op->publish();
  }
  cancelling_.wait_none();
}

}  // namespace heddle::async_detail
