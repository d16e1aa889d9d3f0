// SPDX-License-Identifier: Apache-2.0
// The interface every backend implements: frames out, frames in, and where buffers live.
//
// The engine (engine.hpp) is the transport's only user. Incoming frames are handed to a
// frame_sink by poll(), which one thread at a time calls (the progress lock, progress.hpp): the
// receiver thread, or a thread waiting in sync() that polls for its own reply.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "heddle/am/errors.hpp"
#include "heddle/am/message.hpp"

namespace heddle::am_detail {

// Direct placement: where a transport may read part of a payload straight into, so that its bytes
// are not copied twice (a put's data into the buffer, a get's reply into the caller's memory).
struct placement {
  std::byte* data = nullptr;     // nullptr: no placement, deliver the payload whole
  std::shared_ptr<void> keeper;  // keeps `data` alive until the frame is delivered (a buffer's allocation)
};

// How many payload bytes of a frame of kind `k` come before the part that may be placed: a put's
// buffer id and offset, nothing of a reply; no_placement for frames whose payload is never placed.
inline constexpr std::size_t no_placement = ~std::size_t{0};
constexpr std::size_t placement_prefix(message_kind k) noexcept {
  switch (k) {
    case message_kind::put: return 16;
    case message_kind::reply_value: return 0;
    default: return no_placement;
  }
}

class frame_sink {
 public:
  // A frame from `from` for node `to` (this node, or a loopback node). The payload is valid during
  // the call only. With message_placed in h.flags, `payload` is the prefix only (placement_prefix)
  // and the rest of the h.payload_bytes already lies where place() said.
  virtual void deliver(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) = 0;
  // `peer` is gone (`why` says how: exit status, closed connection, corrupt frame).
  virtual void lost(node_id peer, const std::string& why) = 0;
  // Where a transport may read the payload of frame `h` from `from` after its `prefix` (the first
  // placement_prefix(h.kind) bytes) directly, h.payload_bytes - prefix.size() bytes of it; or no
  // placement. The transport then delivers the frame with message_placed. Polling thread only.
  virtual placement place(node_id from, node_id to, const message_header& h, std::span<const std::byte> prefix) = 0;

 protected:
  ~frame_sink() = default;
};

// Memory a transport allocated for a buffer: where it is, and what to release.
struct local_allocation {
  std::byte* data = nullptr;
  std::uint64_t bytes = 0;
  std::shared_ptr<void> keeper;  // releases the memory (a mapping, a heap block) when dropped
};

class transport {
 public:
  virtual ~transport() = default;

  // Connects to every peer (hello exchange included, through the engine), ready to send.
  virtual void start(frame_sink& sink) = 0;

  // Sends one frame to `to` (never this node); any thread. The payload is `head` then `tail`
  // (h.payload_bytes in all). When the peer cannot take it now, waits if `wait`, else returns
  // false having sent nothing, or queues it: the thread that polls never waits on a peer (two
  // nodes sending to each other would wait on each other). `tail_owner`, when given, keeps the
  // tail's memory alive (a buffer's allocation): a transport may then send the tail from where it
  // lies after this returns, instead of copying it. Throws peer_lost.
  virtual bool send(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                    std::span<const std::byte> tail, bool wait, const std::shared_ptr<void>& tail_owner = {}) = 0;

  // The call path's send (engine.cpp, send_frame): a frame with its payload in one piece and its
  // header packed by the sender (message_header::pack, where the constant fields of a call or a
  // reply fold away). Otherwise as send. Pure, with no default: the compiler would otherwise guess
  // at the call site that it is the default (a compare and the default's body inlined beside the
  // call, on the call path of every backend).
  virtual bool send_packed(node_id from, node_id to, const message_header::words& header,
                           std::span<const std::byte> payload, bool wait) = 0;

  // Delivers what has arrived to the sink; true if anything did, or if a send of the polling
  // thread's completed (traffic either way: the receiver keeps spinning). Holder of the progress
  // lock only.
  virtual bool poll() = 0;
  // A cheap look, from any thread: may something be waiting for poll()? (False negatives only for
  // frames whose senders will wake the receiver.)
  virtual bool pending() const = 0;
  // Sleeps until traffic may have arrived or `timeout` passes; the receiver thread only, not
  // holding the progress lock. Senders wake it (the shm doorbell, the kernel's epoll).
  virtual void sleep(std::chrono::nanoseconds timeout) = 0;
  // Wakes sleep() from another thread (shutdown).
  virtual void interrupt() = 0;
  // Looks for dead peers (those no closed connection reports), reporting them to the sink.
  virtual void check_peers() {}

  // Buffers: memory of this node that peers reach by put/get/copy.
  virtual local_allocation allocate(std::uint64_t bytes, std::uint64_t id, std::size_t alignment);
  // Direct data transfers, where the transport can do better than put/get frames (shm: a copy
  // between the processes' memory, on the calling thread): true when done, false to use frames.
  // Throw (remote_error, session_error) when the buffer or the range is not there.
  virtual bool put_direct(const std::byte*, node_id, std::uint64_t /*id*/, std::uint64_t /*offset*/,
                          std::uint64_t /*bytes*/) {
    return false;
  }
  virtual bool get_direct(node_id, std::uint64_t /*id*/, std::uint64_t /*offset*/, std::byte*,
                          std::uint64_t /*bytes*/) {
    return false;
  }
  // A buffer freed on its owner: forget any mapping of it here.
  virtual void forget(node_id /*owner*/, std::uint64_t /*id*/) {}
};

}  // namespace heddle::am_detail
