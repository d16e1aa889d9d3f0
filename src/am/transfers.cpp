// SPDX-License-Identifier: Apache-2.0
// Data transfers started here (put, get, and the groups of them: scatter, gather): each goes by the
// transport's direct path where it has one (shm: a copy between the processes' memory, on this
// thread) or as a put/get frame whose reply completes it. The frames are served by engine.cpp
// (serve_put, serve_get) on the node that owns the buffer.
#include <cstring>
#include <mutex>

#include "engine.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/ready_future.hpp"

namespace heddle::am_detail {

namespace {

// What a transfer's reply must be: nothing for a put (dst == nullptr); for a get, `bytes` bytes,
// copied to `dst` unless the transport read them there already. The decode_error if it is not.
std::exception_ptr take_reply(std::span<const std::byte> reply, std::byte* dst, std::uint64_t bytes) noexcept {
  if (reply.size() != bytes)
    return std::make_exception_ptr(decode_error("heddle::offload: a " + std::string(dst ? "get" : "put") +
                                                "'s reply has " + std::to_string(reply.size()) + " bytes, " +
                                                std::to_string(bytes) + " expected"));
  if (bytes && reply.data() != dst) std::memcpy(dst, reply.data(), bytes);
  return nullptr;
}

// One put or get and its future.
class pending_transfer final : public pending_reply<void, pending_transfer> {
 public:
  // A get's destination, or none for a put.
  pending_transfer(std::byte* dst, std::uint64_t bytes) noexcept : dst_(dst), bytes_(dst ? bytes : 0) {}
  std::byte* destination(std::uint64_t bytes) noexcept override { return dst_ && bytes == bytes_ ? dst_ : nullptr; }
  void complete(std::span<const std::byte> reply) noexcept override {
    if (std::exception_ptr e = take_reply(reply, dst_, bytes_)) return fail(std::move(e));
    set_value();
    publish();
  }

 private:
  std::byte* dst_;
  std::uint64_t bytes_;
};

// The future of a scatter or a gather: ready when each of its parts (one transfer each) is, failing
// with the failure of the first part, in the buffers' order, that failed.
class transfer_group final : public reply_state<void, transfer_group> {
 public:
  class part final : public pending_call {
   public:
    std::byte* destination(std::uint64_t bytes) noexcept override { return dst_ && bytes == bytes_ ? dst_ : nullptr; }
    void complete(std::span<const std::byte> reply) noexcept override {
      g_->done(index_, take_reply(reply, dst_, bytes_));
    }
    void fail(std::exception_ptr e) noexcept override { g_->done(index_, std::move(e)); }

   private:
    friend class transfer_group;
    transfer_group* g_ = nullptr;
    std::size_t index_ = 0;
    std::byte* dst_ = nullptr;  // a gather's block
    std::uint64_t bytes_ = 0;
  };

  // `dst`, `each`: a gather's destination, each part's block in turn; nullptr for a scatter.
  transfer_group(std::unique_ptr<part[]> parts, std::size_t n, std::byte* dst, std::uint64_t each) noexcept
      : parts_(std::move(parts)), remaining_(n) {
    for (std::size_t i = 0; i < n; ++i) {
      parts_[i].g_ = this;
      parts_[i].index_ = i;
      if (dst) {
        parts_[i].dst_ = dst + i * each;
        parts_[i].bytes_ = each;
      }
    }
  }
  pending_call* at(std::size_t i) noexcept { return &parts_[i]; }

 private:
  // The last part to finish publishes (the record, and the parts with it, may then be gone).
  void done(std::size_t index, std::exception_ptr e) noexcept {
    if (e) {
      std::lock_guard lock(m_);
      if (!first_failure_ || index < first_index_) {
        first_failure_ = std::move(e);
        first_index_ = index;
      }
    }
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (first_failure_) return publish_failure(std::move(first_failure_));
    set_value();
    publish();
  }

  std::unique_ptr<part[]> parts_;
  std::atomic<std::size_t> remaining_;
  std::mutex m_;  // the first failure
  std::exception_ptr first_failure_;
  std::size_t first_index_ = 0;
};

void check_block(const char* what, std::size_t index, const buffer_ref& b, std::uint64_t bytes) {
  if (bytes > b.bytes)
    throw std::out_of_range(std::string("heddle::offload::") + what + ": " + std::to_string(bytes) +
                            " bytes for buffer_ptr " +
                            (index == SIZE_MAX ? std::string() : std::to_string(index) + " ") + "(node " +
                            std::to_string(b.node) + ") of " + std::to_string(b.bytes));
}

// Puts from this thread of at least this many bytes in all are "long" (engine::long_sends).
constexpr std::uint64_t long_put_bytes = std::uint64_t{64} << 10;

}  // namespace

// While a thread sends long puts itself (it waits until the transport has taken each: on mpi until
// the target has copied it), the receiver thread steps aside, as it does when a caller polls for
// its reply: polling beside the sender it would share two cores three ways with the sender and the
// target's receiver (1 MiB on mpi: 0.81 of raw MPI_Send's bandwidth, 0.87-0.99 stepping aside;
// benchmarks.md). The replies follow within a round trip of the last send's return (mpi): this
// thread polls for them a little (settle) before it hands the transport back to the receiver.
// Woken at once instead, the receiver took the core from this thread (the waker, preempted some
// 20 µs on two cores), then the reply from this thread's poll, and it still polled beside the next
// put (1 MiB on mpi: 0.75-0.86 of raw). It is woken only for replies not come by then, for a caller
// that does not wait for them at once. Meanwhile a receiver whose nap ends looks at the wire once
// and naps again (progress.hpp: a long send), so a peer's long put to this node at the same time
// still gets what it needs from this side.
class engine::long_sends {
 public:
  long_sends(engine& e, std::uint64_t bytes) noexcept
      : e_(e), on_(bytes >= long_put_bytes && e.has_receiver_ && !polling_thread) {
    if (on_) e_.progress_.begin_long_send();
  }
  // The replies to wait for a little: `s` is ready when they have all come.
  void settle(const heddle::core_detail::future_state_base* s) noexcept {
    if (!on_ || heddle::core_detail::current_worker) return;  // a worker does not poll: the receiver is woken
    e_.poll_within(s, settle_patience);
    settled_ = s->is_done();
  }
  ~long_sends() {
    if (!on_) return;
    e_.progress_.end_long_send();
    if (!settled_) e_.progress_.wake_receiver();
  }
  long_sends(const long_sends&) = delete;
  long_sends& operator=(const long_sends&) = delete;

 private:
  static constexpr std::chrono::microseconds settle_patience{20};
  engine& e_;
  const bool on_;
  bool settled_ = false;
};

void engine::put_part(const std::byte* local, const buffer_ref& to, std::uint64_t bytes, pending_call* p) noexcept {
  std::exception_ptr failure;
  // A lost node's memory is gone, even where a mapping of it is still here (shm).
  if (!peers_.reachable(to.node)) return fail_unreachable(to.node, p);
  try {
    if (transport_->put_direct(local, to.node, to.id, to.offset, bytes)) return p->complete({});
    const std::uint64_t head[2] = {to.id, to.offset};
    return request(current_node_of(*this), to.node, message_kind::put, std::as_bytes(std::span(head)),
                   std::span(local, bytes), p);
  } catch (...) {
    failure = std::current_exception();
  }
  // Failed outside the catch block: a waiter must never share an exception still being handled here.
  p->fail(std::move(failure));
}

void engine::get_part(const buffer_ref& from, std::byte* local, std::uint64_t bytes, pending_call* p) noexcept {
  std::exception_ptr failure;
  // A lost node's memory is gone, even where a mapping of it is still here (shm).
  if (!peers_.reachable(from.node)) return fail_unreachable(from.node, p);
  try {
    if (transport_->get_direct(from.node, from.id, from.offset, local, bytes))
      return p->complete(std::span(local, bytes));
    const std::uint64_t head[3] = {from.id, from.offset, bytes};
    return request(current_node_of(*this), from.node, message_kind::get, std::as_bytes(std::span(head)), {}, p);
  } catch (...) {
    failure = std::current_exception();
  }
  p->fail(std::move(failure));
}

future<void> engine::put(const std::byte* local, const buffer_ref& to, std::uint64_t bytes) {
  check_block("put", SIZE_MAX, to, bytes);
  auto* p = heddle::core_detail::make_record<pending_transfer>(nullptr, bytes);
  future<void> f = p->get_future();
  long_sends aside(*this, bytes);
  put_part(local, to, bytes, p);
  aside.settle(p);
  return f;
}

future<void> engine::get(const buffer_ref& from, std::byte* local, std::uint64_t bytes) {
  check_block("get", SIZE_MAX, from, bytes);
  auto* p = heddle::core_detail::make_record<pending_transfer>(local, bytes);
  future<void> f = p->get_future();
  get_part(from, local, bytes, p);
  return f;
}

future<void> engine::scatter(const std::byte* local, std::span<const buffer_ref> to, std::uint64_t each) {
  for (std::size_t i = 0; i < to.size(); ++i) check_block("scatter", i, to[i], each);
  if (to.empty()) return make_ready_future();
  auto* g = heddle::core_detail::make_record<transfer_group>(std::make_unique<transfer_group::part[]>(to.size()),
                                                             to.size(), nullptr, 0);
  future<void> f = g->get_future();
  long_sends aside(*this, each * to.size());
  for (std::size_t i = 0; i < to.size(); ++i) put_part(local + i * each, to[i], each, g->at(i));
  aside.settle(g);
  return f;
}

future<void> engine::gather(std::span<const buffer_ref> from, std::byte* local, std::uint64_t each) {
  for (std::size_t i = 0; i < from.size(); ++i) check_block("gather", i, from[i], each);
  if (from.empty()) return make_ready_future();
  auto* g = heddle::core_detail::make_record<transfer_group>(std::make_unique<transfer_group::part[]>(from.size()),
                                                             from.size(), local, each);
  future<void> f = g->get_future();
  for (std::size_t i = 0; i < from.size(); ++i) get_part(from[i], local + i * each, each, g->at(i));
  return f;
}

}  // namespace heddle::am_detail
