// SPDX-License-Identifier: Apache-2.0
// The session's engine: everything between the offload API and a transport.
//
// Out: calls get an id and wait in the pending table until their reply; frames go to the
// transport (or straight to deliver() for this node). In: deliver() starts calls as tasks by the
// strategy the caller chose, completes pending calls with replies, serves put/get into this node's
// buffers, and keeps the peers' hello/goodbye state. A lost peer fails every call waiting on it.
//
// The call path (a call sent, received, replied to, its pending call completed) is the engine's
// own, whole, in engine.cpp: the pending table, the direct call, the handlers' table and the
// progress lock are its members, read without a call, a virtual call or a lock between them. The
// cold state lies in classes of their own, each behind a small interface: the peers and their loss
// (peer_table, peers.hpp: the call path reads its inline reachable() only), this node's buffers
// (buffer_table, buffers.hpp), its remote objects (object_table, objects.hpp) and the receiver
// thread's loop (receiver, receiver.hpp). What the engine does with them (the hello exchange, a
// loss failing the calls, put/get served, an object's queue drained by a task) stays here.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "buffers.hpp"
#include "heddle/am/buffer.hpp"
#include "heddle/am/detail/calls.hpp"
#include "heddle/am/detail/tree.hpp"
#include "heddle/am/session.hpp"
#include "heddle/core/export.hpp"
#include "objects.hpp"
#include "peers.hpp"
#include "pending_table.hpp"
#include "progress.hpp"
#include "receiver.hpp"
#include "transport.hpp"

namespace heddle::am_detail {

class engine final : public frame_sink {
 public:
  engine(const session_options& options, std::unique_ptr<transport> t);
  ~engine();

  // Connects, exchanges hellos (checking the registries), starts the receiver.
  void start();
  // Waits until this node's handlers are done, says goodbye, waits for the peers' goodbyes, fails
  // what still waits, stops. Idempotent.
  void finish();
  // Blocks until node 0 said goodbye or was lost; true if it said goodbye.
  bool serve_until_node0_leaves();

  node_id self() const noexcept { return options_.node; }
  node_id nodes() const noexcept { return options_.nodes; }
  transport& wire() noexcept { return *transport_; }

  // The offload API's entry points.
  void call(node_id from, node_id to, std::uint32_t handler, heddle::strategy how, std::span<const std::byte> args,
            pending_call* p);
  // sync's call (call_and_poll): `s` is `p`'s state, on the caller's stack. On a thread that may
  // poll, it returns once the reply has come or the caller's patience (options.caller_spin) is
  // over; elsewhere once the call is sent.
  [[gnu::always_inline]] void call_and_wait(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                                            std::span<const std::byte> args, pending_call* p,
                                            heddle::core_detail::future_state_base* s);
  void post(node_id from, node_id to, std::uint32_t handler, heddle::strategy how, std::span<const std::byte> args);
  // offload::broadcast and for_each_node: `handler` on every node but `from`, along the tree of
  // heddle/am/detail/tree.hpp (tree.cpp); `p` completes with the results in node order.
  void tree_call(node_id from, std::uint32_t handler, heddle::strategy how, std::span<const std::byte> args,
                 pending_call* p);
  // A frame that carries a pending call (put, get): the prefix, then the data.
  void request(node_id from, node_id to, message_kind kind, std::span<const std::byte> head,
               std::span<const std::byte> tail, pending_call* p);
  // A thread waiting for `s` (not a worker) polls the transport for a while (drive_reply).
  void poll_until(const heddle::core_detail::future_state_base* s);
  // Data transfers between local memory and a buffer anywhere (put/get frames, or the transport's
  // direct path; transfers.cpp). Throw std::out_of_range, with nothing sent, when `bytes` exceeds
  // the buffer.
  future<void> put(const std::byte* local, const buffer_ref& to, std::uint64_t bytes);
  future<void> get(const buffer_ref& from, std::byte* local, std::uint64_t bytes);
  // offload::scatter and gather: block i (`each` bytes at local + i * each) to or from buffer i, for
  // every i, as one future that fails with the first failure in the buffers' order. Throw
  // std::out_of_range, with nothing sent, when a block exceeds its buffer.
  future<void> scatter(const std::byte* local, std::span<const buffer_ref> to, std::uint64_t each);
  future<void> gather(std::span<const buffer_ref> from, std::byte* local, std::uint64_t each);

  // Buffers of this node (of the loopback nodes this process holds): the offload API's allocate,
  // free and buffer_ptr::get use them directly (any thread).
  buffer_table& buffers() noexcept { return buffers_; }
  // Remote objects of this node: the offload API adopts its objects here (any thread).
  object_table& objects() noexcept { return objects_; }

  // A tree call waiting for its own node's result and its subtrees' replies (tree.cpp).
  class tree_gather;

  // Remote objects (heddle/am/remote.hpp; objects.cpp): method calls on object `id` of node `to`;
  // the release of the caller's last reference.
  void object_call(node_id from, node_id to, std::uint64_t id, std::uint32_t handler, std::span<const std::byte> args,
                   pending_call* p);
  void release_object(node_id from, node_id to, std::uint64_t id);

  // frame_sink
  void deliver(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) override;
  void lost(node_id peer, const std::string& why) override;
  placement place(node_id from, node_id to, const message_header& h, std::span<const std::byte> prefix) override;

 private:
  // Sends a frame; from the polling thread, a frame the peer cannot take now goes out from a task.
  // Throws peer_lost or session_error when `to` cannot be reached. send_frame is defined inline in
  // engine.cpp (the call path's common case) and always inlined (in deliver, whose other cases are
  // large, the inliner's budget left the reply's send out of line); other files call send_general,
  // which does the same.
  [[gnu::always_inline]] void send_frame(node_id from, node_id to, const message_header& h,
                                         std::span<const std::byte> head = {}, std::span<const std::byte> tail = {},
                                         const std::shared_ptr<void>& tail_owner = no_owner);
  // A frame whose bytes nobody keeps alive for the transport: one object, not a temporary per frame.
  static inline const std::shared_ptr<void> no_owner{};
  [[gnu::always_inline]] void send_to_peer(node_id from, node_id to, const message_header::words& packed,
                                           std::span<const std::byte> head, std::span<const std::byte> tail,
                                           const std::shared_ptr<void>& tail_owner);
  // Out of line: the flattened call path (call, call_and_poll) would otherwise inline it, and
  // through it the whole receive path, which leads back here (a frame for this process).
  [[gnu::noinline]] void send_general(node_id from, node_id to, const message_header& h,
                                      std::span<const std::byte> head, std::span<const std::byte> tail,
                                      const std::shared_ptr<void>& tail_owner);
  void send_untraced(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                     std::span<const std::byte> tail, const std::shared_ptr<void>& tail_owner);
  void send_later(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                  std::span<const std::byte> tail);
  // Fails `p` with why `to` cannot be reached (lost, or no such node).
  void fail_unreachable(node_id to, pending_call* p);
  // Inlined into deliver (the call path) and deliver_traced.
  [[gnu::always_inline]] void deliver_untraced(node_id from, node_id to, const message_header& h,
                                               std::span<const std::byte> payload);
  void deliver_traced(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload);
  // deliver's way for every frame but an untraced reply; out of line, so that a reply's way saves
  // no registers.
  [[gnu::noinline]] void deliver_frame(node_id from, node_id to, const message_header& h,
                                       std::span<const std::byte> payload);
  // A reply_value frame: the call it answers completed (or nothing, if it is not waiting here).
  void complete_reply(node_id from, const message_header& h, std::span<const std::byte> payload);
  // The direct call answered by call `id` from `from`, now the taker's; nullptr if there is none.
  // Only the polling thread may have one: others never look at direct_.
  pending_call* take_direct(std::uint64_t id, node_id from) noexcept {
    if (!is_direct(id, from)) return nullptr;
    direct_.id = 0;
    return direct_.call;
  }
  bool is_direct(std::uint64_t id, node_id from) const noexcept {
    return polling_thread && direct_.id == id && direct_.to == from;
  }
  // The call waiting for the reply `id` from `from`, now the taker's: the direct call, or the
  // pending table's; nullptr if there is none.
  pending_call* take_call(std::uint64_t id, node_id from) {
    if (pending_call* p = take_direct(id, from)) return p;
    return pending_.take(id, from);
  }
  // The same call, left where it waits.
  pending_call* find_call(std::uint64_t id, node_id from) {
    if (is_direct(id, from)) return direct_.call;
    return pending_.find(id, from);
  }
  // call_and_wait's way with the progress lock taken: the call sent as direct_, then polled for.
  void call_directly(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                     std::span<const std::byte> args, pending_call* p, heddle::core_detail::future_state_base* s);
  // A direct call whose caller stops polling (its patience over, or its peer lost): failed, or
  // moved into the pending table for the receiver thread to complete. The progress lock is held
  // and given back here.
  [[gnu::noinline]] void end_direct_wait();
  // complete_reply's rare ways: a call in the pending table's overflow map (`p` null), a reply
  // placed in the caller's memory (pending_call::destination).
  [[gnu::noinline]] void complete_reply_slowly(node_id from, const message_header& h,
                                               std::span<const std::byte> payload, pending_call* p);
  // A handler's name in traces, interned the first time it runs traced (the task that runs it
  // takes it as its label).
  const char* handler_label(std::uint32_t handler);
  // A call's header, packed, with a new call id.
  static message_header::words call_header(std::uint32_t handler, heddle::strategy how, std::size_t arg_bytes) noexcept;
  // Call `id` to `to` into the pending table; false, the call failed, if the peer is lost by then.
  bool wait_in_table(std::uint64_t id, node_id to, pending_call* p);
  // A frame that carries a pending call (its header packed): the table's slot, the frame sent.
  void request_frame(node_id from, node_id to, const message_header::words& packed, std::span<const std::byte> head,
                     std::span<const std::byte> tail, pending_call* p);
  // Runs a call's handler and replies to it (or, for a tree call, hands the result to `g`).
  void run_call(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                tree_gather* g = nullptr);
  [[gnu::always_inline]] void run_inline(node_id from, node_id to, const message_header& h,
                                         std::span<const std::byte> args, tree_gather* g = nullptr);
  // run_call's body, inlined into deliver's short path; a handler that threw is reported (to the
  // caller, the tree, or stderr for a ping) by handler_threw, in the catch block, out of line.
  [[gnu::always_inline]] void call_handler(node_id from, node_id to, const message_header& h,
                                           std::span<const std::byte> args, tree_gather* g);
  [[gnu::cold]] void handler_threw(node_id from, node_id to, const message_header& h, tree_gather* g);
  // Starts a call's handler by its strategy: inline for short_task, else as a task (a copy of args);
  // by the default rule (by_rule), held for the receiving thread when the handler is known short.
  void start_handler(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                     tree_gather* g);
  // The default rule (docs/am.md, "Calls"): a call is held for the receiving thread (the receiver
  // runs it once its poll returns, receiver.hpp) when its handler's recent runs were all short and
  // the receiver may hold one; else it runs as express, on a worker, measured.
  [[gnu::always_inline]] bool hold_if_short(node_id from, node_id to, const message_header& h,
                                            std::span<const std::byte> args, tree_gather* g);
  void start_by_rule(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                     tree_gather* g);
  // A call's handler as a task started `how` (a copy of args); by the default rule, measured.
  void start_task(node_id from, node_id to, const message_header& h, std::span<const std::byte> args, tree_gather* g,
                  heddle::strategy how);
  void run_held();  // on the receiving thread, the progress lock given back: the held call
  // A call by the default rule: the handler run and timed, the time recorded as a held run's or a
  // worker's. A worker's short runs in a row make the handler held; a held run's overruns undo it.
  void run_measured(std::uint32_t handler, reader& r, writer& result);
  void record_worker_run(std::uint32_t handler, std::int64_t ns) noexcept;
  void record_held_run(std::uint32_t handler, std::int64_t ns) noexcept;
  void tree_call_from(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload);
  // Sends the tree call `h` with `args` on to the two halves of `range`'s ranks below it (tree.cpp).
  void tree_fan_out(node_id self, node_id origin, const tree_range& range, const message_header& h,
                    std::span<const std::byte> args, tree_gather* g);
  void tree_result(tree_gather* g, node_id node, bool threw, std::span<const std::byte> bytes);
  // An object's frame into its serial queue (object_table), and the task that runs the queue's
  // calls one at a time, in arrival order (objects.cpp).
  void object_frame(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload);
  void drain_object(node_id here, const std::shared_ptr<object_table::entry>& o);
  void reply(node_id from, node_id to, std::uint64_t call_id, message_kind kind, std::span<const std::byte> head,
             std::span<const std::byte> tail = {});
  // reply's body, inlined into deliver's short path.
  [[gnu::always_inline]] void send_reply(node_id from, node_id to, std::uint64_t call_id, message_kind kind,
                                         std::span<const std::byte> head, std::span<const std::byte> tail = {});
  void reply_failure(node_id from, node_id to, std::uint64_t call_id, const std::string& what);
  // One transfer; `p` is completed (a get's bytes at `local`) or failed, once.
  void put_part(const std::byte* local, const buffer_ref& to, std::uint64_t bytes, pending_call* p) noexcept;
  void get_part(const buffer_ref& from, std::byte* local, std::uint64_t bytes, pending_call* p) noexcept;
  class long_sends;  // the receiver thread steps aside while this thread sends long puts
  void serve_put(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload);
  void serve_get(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload);
  void hello_from(node_id from, std::span<const std::byte> payload);
  // Traced sessions: this node's clock against node 0's, for the merge of the nodes' traces.
  void measure_clock();
  void clock_probe_from(node_id from, std::span<const std::byte> payload);
  void clock_reply_from(std::span<const std::byte> payload);
  void fail_pending(node_id node, const std::function<std::exception_ptr()>& make_error);  // node == nodes(): all
  // Every call waiting on lost peers, failed (the sweeps a loss makes due: peer_table::take_sweep).
  void sweep_lost();
  // poll_until's polling for at most `patience` (from the first look at the clock), without waking
  // the receiver thread afterwards.
  void poll_within(const heddle::core_detail::future_state_base* s, std::chrono::nanoseconds patience);
  // Out of line: its idle turns are the wait's, not the call's (bench/am/callgrind_calls.sh counts
  // a call without them).
  [[gnu::noinline]] void poll_for_a_while(const heddle::core_detail::future_state_base* s,
                                          std::chrono::steady_clock::time_point& deadline,
                                          std::chrono::nanoseconds patience);
  // Whether the caller's patience (from the first look: `deadline` is set then) is over.
  bool past(std::chrono::steady_clock::time_point& deadline, std::chrono::nanoseconds patience) const;
  [[gnu::noinline]] void check_peers_if_due();
  void task_begun() noexcept { active_.fetch_add(1, std::memory_order_relaxed); }
  void task_ended() noexcept;

  session_options options_;
  runtime* rt_;
  std::unique_ptr<transport> transport_;
  bool has_receiver_;
  peer_table peers_;  // the call path reads its inline reachable() only (peers.hpp)

  pending_table pending_;
  // A sync call whose caller took the progress lock before sending it and keeps it until the
  // reply (call_directly): it waits here instead of the pending table, and only its caller, the
  // one polling thread, looks here (take_direct). Its reply costs no atomic operation: no table's
  // slot claimed and freed, no exchange to publish it (pending_call::complete_here). id 0: none.
  // Under progress_.
  struct direct_call {
    std::uint64_t id = 0;
    node_id to = 0;
    pending_call* call = nullptr;
  } direct_;

  object_table objects_;  // remote objects of this node (objects.hpp): their frames only
  buffer_table buffers_;  // buffers of this node (buffers.hpp): puts, gets and the API's calls only

  std::atomic<std::int64_t> active_{0};  // handlers and deferred sends not yet done
  std::uint32_t handler_count_ = 0;
  std::unique_ptr<handler_fn[]> handlers_;                      // the registry's functions by index: no lookup per call
  std::unique_ptr<std::atomic<const char*>[]> handler_labels_;  // per handler index, when traced
  // Per handler, the default rule's measure of it: whether calls to it are held for the receiving
  // thread, the worker runs under short_run_ns in a row so far and how many make it held (doubled,
  // up to a cap, each time a held run overran). Relaxed atomics: a lost update costs a run's place.
  struct handler_pace {
    std::atomic<bool> held{false};
    std::atomic<bool> overran{false};  // the last held run took over short_run_ns
    std::atomic<std::uint32_t> short_runs{0};
    std::atomic<std::uint32_t> needed{4};
  };
  static constexpr std::int64_t short_run_ns = 5000, long_run_ns = 200'000;
  static constexpr std::uint32_t most_needed = 1024;
  std::unique_ptr<handler_pace[]> paces_;
  // The call held during a poll (receiver::hold), which the receiving thread runs when the poll
  // returns: only that thread writes and reads it (a second receiver holds none before the first
  // stands by again, receiver.hpp).
  static constexpr std::size_t held_args_max = 256;
  struct held_call {
    node_id from = 0, to = 0;
    message_header h{};
    tree_gather* g = nullptr;
    std::size_t bytes = 0;
    alignas(16) std::byte args[held_args_max];
  } held_;
  progress progress_;
  std::atomic<std::int64_t> next_peer_check_ns_{0};
  receiver receiver_;  // after progress_ and transport_, which it uses
  bool finished_ = false;
};

// Call ids (message_header::call_id) never repeat in a process, across sessions too, so that a
// slot of the pending table whose id matches names one call for good. Each thread takes them from
// a block of its own, call_id_block at a time: a call costs no locked instruction for its id, and
// threads that call at once do not pass one counter's cache line between them. A thread's ids are
// consecutive, so its calls walk through the table's slots one after the other, and blocks handed
// out in turn cover different slots (sixteen of them fill the table), as one counter's ids did.
inline constexpr std::uint64_t call_id_block = 64;
inline std::atomic<std::uint64_t> next_call_id_block{1};  // 0 marks a free slot: never an id
inline constinit thread_local std::uint64_t call_ids_next HEDDLE_DETAIL_TLS_MODEL = 0;
inline constinit thread_local std::uint64_t call_ids_end HEDDLE_DETAIL_TLS_MODEL = 0;
inline std::uint64_t new_call_id() noexcept {
  if (call_ids_next == call_ids_end) [[unlikely]] {
    call_ids_next = next_call_id_block.fetch_add(call_id_block, std::memory_order_relaxed);
    call_ids_end = call_ids_next + call_id_block;
  }
  return call_ids_next++;
}

// The open session's engine, or nullptr (session.cpp): read by the call path without a call.
extern std::atomic<engine*> the_engine;
// The engine of the open session; session_error if there is none (throw_no_session).
engine& current_engine();
[[noreturn, gnu::cold]] void throw_no_session();
// Fails `p` with the session_error that no session is open (api.cpp).
[[gnu::cold]] void fail_without_session(pending_call* p) noexcept;
// The open session's engine for a call whose state is `p`; without one, nullptr, `p` failed.
inline engine* engine_or_fail(pending_call* p) noexcept {
  if (engine* e = the_engine.load(std::memory_order_acquire)) [[likely]]
    return e;
  fail_without_session(p);
  return nullptr;
}
// The same, or nullptr, counted as in use until release_engine (so that the session waits for it
// before it deletes the engine).
engine* acquire_engine() noexcept;
void release_engine() noexcept;
// Set while a handler runs (engine.cpp, handler_scope): the node it runs on (loopback nodes share a
// process).
HEDDLE_FAST_TLS(node_id, handler_node);
HEDDLE_FAST_TLS(bool, in_handler);
// The node the calling thread acts for: the node whose handler it runs, else the engine's own.
inline node_id current_node_of(const engine& e) noexcept { return in_handler ? handler_node : e.self(); }

}  // namespace heddle::am_detail
