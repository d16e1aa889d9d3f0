// SPDX-License-Identifier: Apache-2.0
// The session's peers as this node knows them: who said hello (and whether its registry matched),
// who said goodbye, who is lost and why, and node 0's answer to the last clock probe.
//
// Why a class of its own: apart from one look, none of this is on the call path. A call or a reply
// asks reachable() (inline: the vector's bounds and one acquire load, as when the engine held the
// vector itself); everything else is the session's start, end and failures, which take this
// table's mutex and wait on its condition variable, and which the engine's call path never
// touches.
//
// Thread safety: every call may be made from any thread. reachable(), is_lost() and
// trace_sequence() take no lock; the others take the table's mutex (never held while a frame is
// sent or a call completed). Waits (await and the calls named await_*) sleep on the condition
// variable, which every change of a peer's state notifies; they look again every 10 ms too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "heddle/am/errors.hpp"

namespace heddle::am_detail {

class peer_table {
 public:
  // What a node says first to every peer: who it is, and the registry it was built with.
  struct hello {
    std::uint32_t node, nodes;
    std::uint64_t hash, count;
    std::int64_t pid;
  };

  // A session of `nodes` nodes seen from node `self`, which is present (its hello taken as said).
  peer_table(node_id self, node_id nodes);

  node_id size() const noexcept { return static_cast<node_id>(peers_.size()); }
  // Whether `n` is a node of the session that is not lost: the call path's look at its peer. Any
  // thread, no lock.
  // Always inlined: in deliver_frame (the target's call path, a large function) the inliner's budget
  // left it out of line, a call of 15 instructions per reply (callgrind_calls.sh).
  [[gnu::always_inline]] bool reachable(node_id n) const noexcept {
    return n < peers_.size() && !peers_[n].lost.load(std::memory_order_acquire);
  }
  // Whether node `n` (< size()) is lost. Any thread, no lock.
  [[gnu::always_inline]] bool is_lost(node_id n) const noexcept {
    return peers_[n].lost.load(std::memory_order_acquire);
  }
  // The peer, for errors: "node 2 (pid 4711)". Any thread (the mutex).
  std::string describe(node_id n) const;
  // Throws peer_lost if `n` is lost (saying why), session_error if it does not exist. Any thread.
  void check_reachable(node_id n) const;
  // "heddle::offload: node 2 (pid 4711) was lost: why", for the calls that fail with the loss.
  // Any thread; `n` < size().
  std::string loss_text(node_id n) const;

  // Marks `n` lost for `why` and wakes the waiters; false (nothing changed) if it is lost already
  // or does not exist. Two sweeps of the pending table become due (take_sweep). Any thread (the
  // transport's polling thread, or a sender that found the peer gone).
  bool mark_lost(node_id n, const std::string& why);
  // True once for each sweep that a loss made due: a call inserted into the pending table just as
  // its peer was lost may have escaped the loss's own sweep (pending_table.hpp), so the engine's
  // next two looks at its peers sweep again. Any thread, no lock.
  bool take_sweep() noexcept;

  // The loopback backend: every node is in this process, present from the start. start() only.
  void all_present();
  // Node `from`'s hello: its pid recorded, and the refusal that start() reports if it is not the
  // node it should be, or was built with a different registry (hash, count) than this process.
  // The polling thread.
  void record_hello(node_id from, const hello& h, std::uint64_t registry_hash, std::uint64_t registry_count);
  // Node `from`'s goodbye: it ends its session. The polling thread.
  void record_goodbye(node_id from);
  // The counter of the traced frames to `to` (< size()), for their sequence numbers
  // (message_header::sequence). Any thread: the counter is atomic.
  std::atomic<std::uint16_t>& trace_sequence(node_id to) noexcept { return peers_[to].trace_sequence; }

  // Waits until pred() holds (looked at with the mutex held) or the deadline passes; true if it
  // holds. The waits block: never on the polling thread, whose frames they wait for.
  template <class Pred>
  bool await(Pred pred, std::chrono::steady_clock::time_point deadline);
  // start(): waits for every peer's hello (or loss, or refusal) until the deadline; then the first
  // failure in node order (a refusal, a loss, a missing hello after `connect_timeout`), or none.
  std::exception_ptr await_hellos(std::chrono::steady_clock::time_point deadline,
                                  std::chrono::milliseconds connect_timeout);
  // finish(): waits for every other node to say goodbye or be lost until the deadline; the nodes
  // still silent then (" 1 3"), or "" if none.
  std::string await_goodbyes(std::chrono::steady_clock::time_point deadline);
  // serve(): waits (without a deadline) until node 0 said goodbye or was lost; true if it said
  // goodbye. Node 0's loss is noted on stderr (the serving node's only word on why it stops).
  bool await_node0_goodbye();

  // Node 0's clock reply: the probe's time (this node's clock) and node 0's at its receipt. The
  // polling thread.
  void record_clock_reply(std::int64_t probe_ns, std::int64_t remote_ns);
  // Waits until the deadline for the reply to the probe sent at `probe_ns`; node 0's time in it,
  // or false if none came.
  bool await_clock_reply(std::int64_t probe_ns, std::chrono::steady_clock::time_point deadline,
                         std::int64_t& remote_ns);

 private:
  struct peer_state {
    std::atomic<bool> lost{false};
    bool hello = false;
    bool goodbye = false;
    std::int64_t pid = 0;
    std::atomic<std::uint16_t> trace_sequence{0};  // the last frame's to this peer, traced (message_header::sequence)
    std::string why;                               // how it was lost
    std::exception_ptr refused;                    // a hello that did not match
  };

  // First: the call path's look (reachable) finds the vector where the engine's own was.
  std::vector<peer_state> peers_;
  const node_id self_;
  mutable std::mutex m_;  // peers_' plain fields, the clock reply, and the waiters of cv_
  std::condition_variable cv_;
  // The last clock_reply, under m_: the probe's time and node 0's at its receipt.
  std::int64_t reply_probe_ns_ = 0, reply_remote_ns_ = 0;
  std::atomic<unsigned> sweeps_due_{0};  // set by a loss: take_sweep's next answers
};

template <class Pred>
bool peer_table::await(Pred pred, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(m_);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    cv_.wait_for(lock, std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace heddle::am_detail
