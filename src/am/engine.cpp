// SPDX-License-Identifier: Apache-2.0
#include "engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "heddle/am/functor.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/core/trace.hpp"
#include "trace_kinds.hpp"

namespace heddle::am_detail {

namespace {

using clock = std::chrono::steady_clock;
using heddle::core_detail::spin_pause;

// Only loopback's nodes share a process (`shared`): elsewhere the node a handler runs on is this
// process's, which current_node_of gives without a scope.
class handler_scope {
 public:
  handler_scope(node_id n, bool shared) noexcept : shared_(shared) {
    if (!shared_) return;
    saved_node_ = handler_node;
    saved_in_ = in_handler;
    handler_node = n;
    in_handler = true;
  }
  ~handler_scope() {
    if (!shared_) return;
    handler_node = saved_node_;
    in_handler = saved_in_;
  }
  handler_scope(const handler_scope&) = delete;
  handler_scope& operator=(const handler_scope&) = delete;

 private:
  bool shared_;
  node_id saved_node_ = 0;
  bool saved_in_ = false;
};

std::vector<std::byte> joined(std::span<const std::byte> head, std::span<const std::byte> tail) {
  std::vector<std::byte> v(head.size() + tail.size());
  if (!head.empty()) std::memcpy(v.data(), head.data(), head.size());
  if (!tail.empty()) std::memcpy(v.data() + head.size(), tail.data(), tail.size());
  return v;
}

template <class T>
T read_prefix(std::span<const std::byte> payload, std::size_t at) {
  T v;
  if (payload.size() < at + sizeof v) throw decode_error("heddle::offload: truncated data-transfer frame");
  std::memcpy(&v, payload.data() + at, sizeof v);
  return v;
}

}  // namespace

HEDDLE_FAST_TLS_DEFINITION(node_id, handler_node);
HEDDLE_FAST_TLS_DEFINITION(bool, in_handler);

namespace {
// Set while the receiving thread runs a held call (engine::run_held): its run is timed as held.
constinit thread_local bool held_run HEDDLE_DETAIL_TLS_MODEL = false;
}  // namespace

// Every frame's way out. The common case, a frame to a reachable peer in another process with no
// trace recorded, goes to the transport from here, inlined into its callers; the rest (a lost or
// unknown node, tracing, a frame for this process) takes send_general. send_to_peer is the same
// after the look at the peer, for a caller that has just made it (request_frame). It takes the
// header as its packed words only, which the common case hands on as they are: the fields of a
// call or a reply are constants and registers there, and no header is kept in memory for the rare
// ways (which unpack one; a header whose address they took had to be stored, and read back after
// the atomic operations).
inline void engine::send_to_peer(node_id from, node_id to, const message_header::words& packed,
                                 std::span<const std::byte> head, std::span<const std::byte> tail,
                                 const std::shared_ptr<void>& tail_owner) {
  if (!heddle::core_detail::trace::on() && (to != self() || !has_receiver_)) [[likely]] {
    // One piece (a call's arguments, a result): the packed header.
    if (tail.empty() ? transport_->send_packed(from, to, packed, head, /*wait=*/!polling_thread)
                     : transport_->send(from, to, message_header::unpack(packed), head, tail, /*wait=*/!polling_thread,
                                        tail_owner)) [[likely]]
      return;
    return send_later(from, to, message_header::unpack(packed), head, tail);
  }
  send_general(from, to, message_header::unpack(packed), head, tail, tail_owner);
}

inline void engine::send_frame(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                               std::span<const std::byte> tail, const std::shared_ptr<void>& tail_owner) {
  const message_header::words packed = h.pack();
  if (peers_.reachable(to)) [[likely]]
    return send_to_peer(from, to, packed, head, tail, tail_owner);
  send_general(from, to, message_header::unpack(packed), head, tail, tail_owner);
}

// The bodies of run_call and reply, inlined into deliver's short path (and wrapped by those two
// for the other files' callers).
inline void engine::send_reply(node_id from, node_id to, std::uint64_t call_id, message_kind kind,
                               std::span<const std::byte> head, std::span<const std::byte> tail) {
  const message_header h{.kind = kind, .call_id = call_id, .payload_bytes = head.size() + tail.size()};
  try {
    send_frame(from, to, h, head, tail);
  } catch (const peer_error&) {
    // The caller is gone: nobody to answer.
  }
}

inline void engine::call_handler(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                                 tree_gather* g) {
  handler_scope scope(to, !has_receiver_);
  writer result;  // a small result stays on this stack
  try {
    if (h.handler >= handler_count_) [[unlikely]]
      (void)registry::instance().at(h.handler);  // throws unknown_handler, saying what this process has
    reader r(args);
    if (h.strategy == offload::by_rule_code) run_measured(h.handler, r, result);
    else handlers_[h.handler](r, result);
    // Traced: the task running this handler is labelled with its name.
    if (heddle::core_detail::trace::on()) [[unlikely]]
      heddle::core_detail::trace::pending_label = handler_label(h.handler);
  } catch (...) {
    return handler_threw(from, to, h, g);
  }
  if (g) [[unlikely]]
    return tree_result(g, to, /*threw=*/false, result.data());
  if (h.kind != message_kind::post) send_reply(to, from, h.call_id, message_kind::reply_value, result.data());
}

engine::engine(const session_options& options, std::unique_ptr<transport> t)
    : options_(options),
      rt_(options.rt ? options.rt : &default_runtime()),
      transport_(std::move(t)),
      has_receiver_(options.transport != backend::loopback),
      peers_(options.node, options.nodes),
      receiver_(
          *transport_, progress_, options.receiver_spin, [this] { check_peers_if_due(); }, [this] { run_held(); }) {
  // The handlers' table, fixed from here on (the registry is sealed: hello compares its hash).
  registry& reg = registry::instance();
  reg.seal();
  handler_count_ = static_cast<std::uint32_t>(reg.size());
  handlers_.reset(new handler_fn[handler_count_]);
  for (std::uint32_t i = 0; i < handler_count_; ++i) handlers_[i] = reg.at(i);
  handler_labels_.reset(new std::atomic<const char*>[handler_count_]());
  paces_.reset(new handler_pace[handler_count_]);
}

engine::~engine() { finish(); }

// ---- start and finish ---------------------------------------------------------------------------

void engine::start() {
  transport_->start(*this);
  if (!has_receiver_) return peers_.all_present();
  receiver_.start();
  // Hello: who this is, and the registry it was built with.
  registry& reg = registry::instance();
  const peer_table::hello hello{self(), nodes(), reg.hash(), reg.size(), ::getpid()};
  for (node_id n = 0; n < nodes(); ++n) {
    if (n == self()) continue;
    const message_header h{.kind = message_kind::hello, .payload_bytes = sizeof hello};
    send_frame(self(), n, h, std::as_bytes(std::span(&hello, 1)));
  }
  if (std::exception_ptr failure = peers_.await_hellos(clock::now() + options_.connect_timeout,
                                                       options_.connect_timeout)) {
    receiver_.stop();
    finished_ = true;
    std::rethrow_exception(failure);
  }
  if (heddle::core_detail::trace::on() && self() != 0) measure_clock();
}

// Eight probes to node 0, each answered at once with node 0's time; the one with the shortest round
// trip gives the offset (node 0's time at receipt minus the round trip's midpoint), within half that
// round trip either way (NTP's estimate). The trace records both (otherData.processes[]:
// clock_offset_us, clock_uncertainty_us); heddle-trace merge applies the offset to the traces of
// hosts that do not share node 0's clock. A probe unanswered within a second ends the measurement.
void engine::measure_clock() {
  std::int64_t best_round_trip = INT64_MAX, best_offset = 0;
  for (int i = 0; i < 8; ++i) {
    const std::int64_t sent = heddle::core_detail::steady_now_ns();
    const message_header h{.kind = message_kind::clock_probe, .payload_bytes = sizeof sent};
    try {
      send_frame(self(), 0, h, std::as_bytes(std::span(&sent, 1)));
    } catch (const peer_error&) {
      return;
    }
    std::int64_t remote = 0;
    if (!peers_.await_clock_reply(sent, clock::now() + std::chrono::seconds(1), remote)) break;
    const std::int64_t received = heddle::core_detail::steady_now_ns();
    if (received - sent < best_round_trip) {
      best_round_trip = received - sent;
      best_offset = remote - (sent + received) / 2;
    }
  }
  if (best_round_trip != INT64_MAX) heddle::core_detail::trace::set_clock_offset(best_offset, best_round_trip / 2);
}

void engine::clock_probe_from(node_id from, std::span<const std::byte> payload) {
  std::int64_t times[2];
  if (payload.size() != sizeof times[0])
    throw decode_error("a clock probe of " + std::to_string(payload.size()) + " bytes");
  times[1] = heddle::core_detail::steady_now_ns();
  std::memcpy(&times[0], payload.data(), sizeof times[0]);
  const message_header h{.kind = message_kind::clock_reply, .payload_bytes = sizeof times};
  try {
    send_frame(self(), from, h, std::as_bytes(std::span(times)));
  } catch (const peer_error&) {
    // The prober is gone: nobody to answer.
  }
}

void engine::clock_reply_from(std::span<const std::byte> payload) {
  std::int64_t times[2];
  if (payload.size() != sizeof times)
    throw decode_error("a clock reply of " + std::to_string(payload.size()) + " bytes");
  std::memcpy(times, payload.data(), sizeof times);
  peers_.record_clock_reply(times[0], times[1]);
}

void engine::hello_from(node_id from, std::span<const std::byte> payload) {
  peer_table::hello hello;
  if (payload.size() != sizeof hello) throw decode_error("a hello of " + std::to_string(payload.size()) + " bytes");
  std::memcpy(&hello, payload.data(), sizeof hello);
  registry& reg = registry::instance();
  peers_.record_hello(from, hello, reg.hash(), reg.size());
}

// No notification: finish() looks at the count every 10 ms, and a notification per handler would
// wake whoever waits on the peers' changes (serve(), on every serving node) at every call.
void engine::task_ended() noexcept { active_.fetch_sub(1, std::memory_order_release); }

bool engine::serve_until_node0_leaves() { return self() == 0 || peers_.await_node0_goodbye(); }

void engine::finish() {
  if (finished_) return;
  finished_ = true;
  const auto deadline = clock::now() + options_.shutdown_timeout;
  // What this node still runs (a handler, a reply on its way) finishes before the goodbye.
  if (!peers_.await([&] { return active_.load() == 0; }, deadline))
    std::fprintf(stderr, "heddle: node %u: %lld handlers still running after %lld ms; the session ends anyway\n",
                 self(), static_cast<long long>(active_.load()),
                 static_cast<long long>(options_.shutdown_timeout.count()));
  if (has_receiver_) {
    for (node_id n = 0; n < nodes(); ++n) {
      if (n == self() || peers_.is_lost(n)) continue;
      try {
        send_frame(self(), n, message_header{.kind = message_kind::goodbye});
      } catch (const std::exception&) {
        // lost meanwhile: nothing to say goodbye to
      }
    }
    const std::string missing = peers_.await_goodbyes(deadline);
    if (!missing.empty())
      std::fprintf(stderr, "heddle: node %u: no goodbye from node(s)%s within %lld ms; the session ends anyway\n",
                   self(), missing.c_str(), static_cast<long long>(options_.shutdown_timeout.count()));
    receiver_.stop();
    // No thread polls from here on: a caller still polling finishes its look first.
    for (unsigned n = 1; !progress_.try_lock(); ++n) spin_pause(n);
  }
  fail_pending(nodes(), [] {
    return std::make_exception_ptr(session_error("heddle::offload: the session ended while the call waited"));
  });
  objects_.destroy_all();
  buffers_.clear();
}

// ---- calls out ----------------------------------------------------------------------------------

// Traced, a frame is numbered for its peer (message_header::sequence) and recorded as a send span
// with the start of its flow, which the receiver's receive span ends (deliver).
void engine::send_general(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                          std::span<const std::byte> tail, const std::shared_ptr<void>& tail_owner) {
  if (!peers_.reachable(to)) peers_.check_reachable(to);  // throws, saying why
  namespace trace = heddle::core_detail::trace;
  if (!trace::on()) return send_untraced(from, to, h, head, tail, tail_owner);
  message_header numbered = h;
  std::atomic<std::uint16_t>& counter = peers_.trace_sequence(to);
  do numbered.sequence = static_cast<std::uint16_t>(counter.fetch_add(1, std::memory_order_relaxed) + 1);
  while (numbered.sequence == 0);
  const std::uint64_t id = trace_kinds::message_flow_id(from, to, numbered.sequence);
  const std::uint64_t t0 = trace::now();
  trace::emit_instant(trace_kinds::message_begin, nullptr, 0, 0, id);
  send_untraced(from, to, numbered, head, tail, tail_owner);
  trace::emit_span(trace_kinds::message_send, t0, trace::now(), to_string(h.kind), static_cast<std::uint16_t>(to),
                   static_cast<std::uint32_t>(std::min<std::uint64_t>(h.payload_bytes, UINT32_MAX)), id);
}

void engine::send_untraced(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                           std::span<const std::byte> tail, const std::shared_ptr<void>& tail_owner) {
  if (to == self() && has_receiver_) {
    if (tail.empty()) return deliver(from, to, h, head);
    const std::vector<std::byte> all = joined(head, tail);
    return deliver(from, to, h, all);
  }
  if (transport_->send(from, to, h, head, tail, /*wait=*/!polling_thread, tail_owner)) return;
  send_later(from, to, h, head, tail);
}

// The polling thread never waits on a peer: a frame the peer cannot take now goes out from a worker.
void engine::send_later(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                        std::span<const std::byte> tail) {
  task_begun();
  (void)rt_->task([this, from, to, h, bytes = joined(head, tail)] {  // nobody waits for it
    try {
      transport_->send(from, to, h, bytes, {}, true);
    } catch (const std::exception&) {
      // The peer was lost: whatever waited for this frame fails through lost().
    }
    task_ended();
  });
}

inline message_header::words engine::call_header(std::uint32_t handler, heddle::strategy how,
                                                 std::size_t arg_bytes) noexcept {
  return message_header{.kind = message_kind::call,
                        .strategy = static_cast<std::uint8_t>(how),
                        .handler = handler,
                        .call_id = new_call_id(),
                        .payload_bytes = arg_bytes}
      .pack();
}

// A peer lost between the caller's look and the insertion may have failed its pending calls before
// this one was in the table: this look, or else the next sweep (check_peers_if_due), takes it.
inline bool engine::wait_in_table(std::uint64_t id, node_id to, pending_call* p) {
  pending_.insert(id, to, p);
  if (!peers_.is_lost(to)) [[likely]]
    return true;
  if (pending_call* q = pending_.take(id, to)) fail_unreachable(to, q);
  return false;
}

// The short path of every call: one look at the peer, the call into the pending table, the frame
// to the transport. A failure to send fails the call's future, never the caller. Flattened: the
// layers below (request_frame, send_frame, the table's insertion) in one body, without their
// entries and exits or the header passed through memory (callgrind: 52 fewer instructions a call).
[[gnu::flatten]] void engine::call(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                                   std::span<const std::byte> args, pending_call* p) {
  request_frame(from, to, call_header(handler, how, args.size()), args, {}, p);
}

void engine::request(node_id from, node_id to, message_kind kind, std::span<const std::byte> head,
                     std::span<const std::byte> tail, pending_call* p) {
  request_frame(
      from, to,
      message_header{.kind = kind, .call_id = new_call_id(), .payload_bytes = head.size() + tail.size()}.pack(), head,
      tail, p);
}

void engine::request_frame(node_id from, node_id to, const message_header::words& packed,
                           std::span<const std::byte> head, std::span<const std::byte> tail, pending_call* p) {
  const std::uint64_t id = message_header::call_id_of(packed);
  if (!peers_.reachable(to)) [[unlikely]]
    return fail_unreachable(to, p);
  if (!wait_in_table(id, to, p)) [[unlikely]]
    return;
  std::exception_ptr failure;
  try {
    send_to_peer(from, to, packed, head, tail, no_owner);  // the peer was looked at just now
    return;
  } catch (...) {
    failure = std::current_exception();
  }
  // Failed outside the catch block: a waiter must never share an exception still being handled here.
  if (pending_call* q = pending_.take(id, to)) q->fail(std::move(failure));
}

void engine::fail_unreachable(node_id to, pending_call* p) {
  std::exception_ptr failure;
  try {
    peers_.check_reachable(to);
    throw peer_lost(to, "heddle::offload: " + peers_.describe(to) + " is lost");
  } catch (...) {
    failure = std::current_exception();
  }
  p->fail(std::move(failure));
}

void engine::post(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                  std::span<const std::byte> args) {
  const message_header h{.kind = message_kind::post,
                         .strategy = static_cast<std::uint8_t>(how),
                         .handler = handler,
                         .payload_bytes = args.size()};
  send_frame(from, to, h, args);
}

placement engine::place(node_id from, node_id to, const message_header& h, std::span<const std::byte> prefix) {
  if (prefix.size() != placement_prefix(h.kind)) return {};
  if (h.kind == message_kind::reply_value) {
    pending_call* p = find_call(h.call_id, from);
    return {p ? p->destination(h.payload_bytes) : nullptr, {}};
  }
  // A put: its bytes go straight into the buffer. A bad buffer or range is no placement: the frame
  // then arrives whole and serve_put reports what is wrong.
  handler_scope scope(to, !has_receiver_);
  try {
    placement where;
    where.data = buffers_.span(current_node_of(*this), read_prefix<std::uint64_t>(prefix, 0),
                               read_prefix<std::uint64_t>(prefix, 8), h.payload_bytes - prefix.size(), &where.keeper);
    return where;
  } catch (const std::exception&) {
    return {};
  }
}

void engine::fail_pending(node_id node, const std::function<std::exception_ptr()>& make_error) {
  const std::vector<pending_call*> failed = pending_.take_all(node, node == nodes());
  // One exception object per call, made before it is published: waiters on different threads never
  // share one (its reference count lives in the uninstrumented C++ runtime).
  for (pending_call* p : failed) {
    std::exception_ptr e = make_error();
    p->fail(std::move(e));
  }
}

// ---- frames in ----------------------------------------------------------------------------------

// Every frame's way in. A reply (every frame a caller receives) is completed here, apart from the
// rest, so that this function saves no registers: the table's take inline, the completion its last
// call. Every other frame goes on to deliver_frame, where, untraced, the kind's switch and the short
// path of a call (run_inline, call_handler, send_reply) are inlined: the frame crosses one function
// more from the transport to the handler, and one from the handler's result to the transport.
void engine::deliver(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  if (h.kind == message_kind::reply_value && !heddle::core_detail::trace::on()) [[likely]]
    return complete_reply(from, h, payload);
  deliver_frame(from, to, h, payload);
}

void engine::deliver_frame(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  if (heddle::core_detail::trace::on()) [[unlikely]]
    return deliver_traced(from, to, h, payload);
  deliver_untraced(from, to, h, payload);
}

// Inline, every call a tail call: the direct call's take (its caller polls: this thread), else the
// slot's; the completion.
inline void engine::complete_reply(node_id from, const message_header& h, std::span<const std::byte> payload) {
  if (pending_call* d = take_direct(h.call_id, from)) [[likely]] {
    if (h.flags & message_placed) [[unlikely]]
      return complete_reply_slowly(from, h, payload, d);
    return d->complete_here(payload);
  }
  pending_call* p = pending_.take_from_slot(h.call_id, from);
  if (!p || (h.flags & message_placed)) [[unlikely]]
    return complete_reply_slowly(from, h, payload, p);
  p->complete(payload);
}

void engine::complete_reply_slowly(node_id from, const message_header& h, std::span<const std::byte> payload,
                                   pending_call* p) {
  if (!p) p = pending_.take_from_overflow(h.call_id, from);
  if (!p) return;
  // A placed reply lies in the caller's memory already: complete() sees it there.
  if (h.flags & message_placed) payload = std::span(p->destination(h.payload_bytes), h.payload_bytes);
  p->complete(payload);
}

void engine::deliver_traced(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  namespace trace = heddle::core_detail::trace;
  const std::uint64_t id = h.sequence ? trace_kinds::message_flow_id(from, to, h.sequence) : 0;
  const std::uint64_t t0 = trace::now();
  if (id) trace::emit_instant(trace_kinds::message_end, nullptr, 0, 0, id);
  struct receipt {  // recorded on the way out, a decode error's included
    std::uint64_t t0, id;
    const message_header& h;
    node_id from;
    ~receipt() {
      trace::emit_span(trace_kinds::message_receive, t0, trace::now(), to_string(h.kind),
                       static_cast<std::uint16_t>(from),
                       static_cast<std::uint32_t>(std::min<std::uint64_t>(h.payload_bytes, UINT32_MAX)), id);
    }
  } recorded{t0, id, h, from};
  deliver_untraced(from, to, h, payload);
}

inline void engine::deliver_untraced(node_id from, node_id to, const message_header& h,
                                     std::span<const std::byte> payload) {
  switch (h.kind) {
    case message_kind::hello: return hello_from(from, payload);
    case message_kind::call:
    case message_kind::post:
      // start_handler makes the same test; made here too, the short case runs inline without a call.
      if (h.strategy == static_cast<std::uint8_t>(heddle::strategy::short_task))
        return run_inline(from, to, h, payload);
      if (h.strategy == offload::by_rule_code) [[likely]]
        return start_by_rule(from, to, h, payload, nullptr);
      return start_handler(from, to, h, payload, nullptr);
    case message_kind::tree_call: return tree_call_from(from, to, h, payload);
    case message_kind::object_call:
    case message_kind::object_release: return object_frame(from, to, h, payload);
    case message_kind::reply_value: return complete_reply(from, h, payload);
    case message_kind::reply_error:
      if (pending_call* p = take_call(h.call_id, from)) {
        std::string text;
        try {
          reader r(payload);
          text = offload::read<std::string>(r);
        } catch (const decode_error& e) {
          text = std::string("(an unreadable error report: ") + e.what() + ")";
        }
        std::exception_ptr e = std::make_exception_ptr(remote_error(from, text));
        p->fail(std::move(e));
      }
      return;
    case message_kind::goodbye: return peers_.record_goodbye(from);
    case message_kind::put: return serve_put(from, to, h, payload);
    case message_kind::get: return serve_get(from, to, h, payload);
    case message_kind::clock_probe: return clock_probe_from(from, payload);
    case message_kind::clock_reply: return clock_reply_from(payload);
  }
}

// strategy::short_task: the handler runs here and now, on the thread that received the frame, with
// no task record (HAM's way). Like a short_task successor, it runs as an outsider lent to the
// runtime: what it spawns goes to the runtime's express lane.
inline void engine::run_inline(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                               tree_gather* g) {
  heddle::core_detail::worker* w = heddle::core_detail::current_worker;
  if (w && w->core == heddle::core_detail::access::core_of(*rt_)) return call_handler(from, to, h, args, g);
  heddle::core_detail::runtime_core* saved = heddle::core_detail::lending_core;
  heddle::core_detail::lending_core = heddle::core_detail::access::core_of(*rt_);
  heddle::core_detail::current_worker = nullptr;
  call_handler(from, to, h, args, g);
  heddle::core_detail::current_worker = w;
  heddle::core_detail::lending_core = saved;
}

// The default rule's first half: a call held for the receiving thread, which runs it (run_held) as
// soon as the poll that brought it returns, without the progress lock.
inline bool engine::hold_if_short(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                                  tree_gather* g) {
  // Traced, every call runs as a task, labelled with its function's name (docs/trace.md).
  if (!receiver_.may_hold() || h.handler >= handler_count_ || args.size() > held_args_max ||
      !paces_[h.handler].held.load(std::memory_order_relaxed) || heddle::core_detail::trace::on())
    return false;
  held_.from = from;
  held_.to = to;
  held_.h = h;
  held_.g = g;
  held_.bytes = args.size();
  if (!args.empty()) std::memcpy(held_.args, args.data(), args.size());
  receiver_.hold();
  return true;
}

void engine::run_held() {
  held_run = true;
  run_inline(held_.from, held_.to, held_.h, std::span<const std::byte>(held_.args, held_.bytes), held_.g);
  held_run = false;
}

// The function alone is timed: the reply's send (a system call on tcp) is the same wherever it runs.
void engine::run_measured(std::uint32_t handler, reader& r, writer& result) {
  const std::int64_t t0 = heddle::core_detail::steady_now_ns();
  handlers_[handler](r, result);
  const std::int64_t took = heddle::core_detail::steady_now_ns() - t0;
  if (held_run) return record_held_run(handler, took);
  record_worker_run(handler, took);
}

// Two held runs in a row over short_run_ns, or one over long_run_ns (the standby's takeover is near),
// send the handler back to the workers (one overrun alone may be the thread's preemption on a busy
// machine); it comes back after twice as many short runs there as the last time (most_needed at
// most), so that a function that is short most of the time but sometimes long is held less and less.
void engine::record_held_run(std::uint32_t handler, std::int64_t ns) noexcept {
  handler_pace& pace = paces_[handler];
  if (ns <= short_run_ns) [[likely]] {
    if (pace.overran.load(std::memory_order_relaxed)) pace.overran.store(false, std::memory_order_relaxed);
    return;
  }
  if (ns <= long_run_ns && !pace.overran.load(std::memory_order_relaxed))
    return pace.overran.store(true, std::memory_order_relaxed);
  pace.overran.store(false, std::memory_order_relaxed);
  pace.held.store(false, std::memory_order_relaxed);
  pace.short_runs.store(0, std::memory_order_relaxed);
  pace.needed.store(std::min(pace.needed.load(std::memory_order_relaxed) * 2, most_needed), std::memory_order_relaxed);
}

void engine::record_worker_run(std::uint32_t handler, std::int64_t ns) noexcept {
  handler_pace& pace = paces_[handler];
  if (ns > short_run_ns) return pace.short_runs.store(0, std::memory_order_relaxed);
  const std::uint32_t runs = pace.short_runs.load(std::memory_order_relaxed) + 1;
  pace.short_runs.store(runs, std::memory_order_relaxed);
  if (runs >= pace.needed.load(std::memory_order_relaxed)) pace.held.store(true, std::memory_order_relaxed);
}

void engine::start_handler(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                           tree_gather* g) {
  if (h.strategy == static_cast<std::uint8_t>(heddle::strategy::short_task)) return run_inline(from, to, h, args, g);
  if (h.strategy == offload::by_rule_code) [[unlikely]]
    return start_by_rule(from, to, h, args, g);
  start_task(from, to, h, args, g, static_cast<heddle::strategy>(h.strategy));
}

// The default rule's second half: a call not held runs as express, on a worker, which measures it.
void engine::start_by_rule(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                           tree_gather* g) {
  if (hold_if_short(from, to, h, args, g)) return;
  start_task(from, to, h, args, g, heddle::strategy::express);
}

void engine::start_task(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                        tree_gather* g, heddle::strategy how) {
  task_begun();
  // The guard ends the task's count whether the task runs or the runtime discards it.
  struct counted {
    engine* e;
    explicit counted(engine* x) : e(x) {}
    counted(counted&& o) noexcept : e(std::exchange(o.e, nullptr)) {}
    ~counted() {
      if (e) e->task_ended();
    }
  };
  auto* t = heddle::core_detail::make_task([this, from, to, h, g](const std::vector<std::byte>& a,
                                                                  const counted&) { run_call(from, to, h, a, g); },
                                           std::vector<std::byte>(args.begin(), args.end()), counted(this));
  t->release();  // nobody waits on the task itself: its reply is the result
  heddle::core_detail::start_successor(heddle::core_detail::access::core_of(*rt_), t, how);
}

void engine::run_call(node_id from, node_id to, const message_header& h, std::span<const std::byte> args,
                      tree_gather* g) {
  call_handler(from, to, h, args, g);
}

void engine::handler_threw(node_id from, node_id to, const message_header& h, tree_gather* g) {
  const std::string text = "heddle::offload: node " + std::to_string(to) + " ran " +
                           std::string(registry::instance().name(h.handler)) + " for node " + std::to_string(from) +
                           ": it threw " +
                           heddle::core_detail::exception_text(std::current_exception(), /*with_type=*/true);
  if (g) return tree_result(g, to, /*threw=*/true, std::as_bytes(std::span(text)));
  if (h.kind != message_kind::post) return reply_failure(to, from, h.call_id, text);
  std::fprintf(stderr, "heddle: %s (a ping: nobody waits for it)\n", text.c_str());
}

void engine::reply(node_id from, node_id to, std::uint64_t call_id, message_kind kind, std::span<const std::byte> head,
                   std::span<const std::byte> tail) {
  send_reply(from, to, call_id, kind, head, tail);
}

void engine::reply_failure(node_id from, node_id to, std::uint64_t call_id, const std::string& what) {
  writer w;
  offload::write(w, what);
  reply(from, to, call_id, message_kind::reply_error, w.data());
}

const char* engine::handler_label(std::uint32_t handler) {
  registry& reg = registry::instance();
  if (handler >= handler_count_) return "handler";
  if (const char* l = handler_labels_[handler].load(std::memory_order_acquire)) return l;
  const char* l = heddle::trace::intern(reg.name(handler));
  handler_labels_[handler].store(l, std::memory_order_release);
  return l;
}

// ---- buffers --------------------------------------------------------------------------------------

void engine::serve_put(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  // A placed put's bytes lie in the buffer already: place() checked the buffer and the range.
  if (!(h.flags & message_placed)) {
    handler_scope scope(to, !has_receiver_);
    try {
      const auto id = read_prefix<std::uint64_t>(payload, 0);
      const auto offset = read_prefix<std::uint64_t>(payload, 8);
      const std::span<const std::byte> data =
          payload.subspan(placement_prefix(message_kind::put));  // after the id and offset
      std::byte* dst = buffers_.span(current_node_of(*this), id, offset, data.size());
      if (!data.empty()) std::memcpy(dst, data.data(), data.size());
    } catch (const std::exception& e) {
      return reply_failure(to, from, h.call_id,
                           std::string("heddle::offload: a put from node ") + std::to_string(from) + ": " + e.what());
    }
  }
  reply(to, from, h.call_id, message_kind::reply_value, {});
}

void engine::serve_get(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  handler_scope scope(to, !has_receiver_);
  std::span<const std::byte> data;
  std::shared_ptr<void> owner;
  try {
    const auto id = read_prefix<std::uint64_t>(payload, 0);
    const auto offset = read_prefix<std::uint64_t>(payload, 8);
    const auto bytes = read_prefix<std::uint64_t>(payload, 16);
    if (payload.size() != 24)
      throw decode_error("heddle::offload: a get frame of " + std::to_string(payload.size()) + " bytes");
    std::byte* p = buffers_.span(current_node_of(*this), id, offset, bytes, &owner);
    data = std::span<const std::byte>(p, bytes);
  } catch (const std::exception& e) {
    return reply_failure(to, from, h.call_id,
                         std::string("heddle::offload: a get from node ") + std::to_string(from) + ": " + e.what());
  }
  // The reply's bytes go from the buffer itself: the allocation stays alive until they are sent,
  // even if the buffer is freed meanwhile.
  const message_header r{.kind = message_kind::reply_value, .call_id = h.call_id, .payload_bytes = data.size()};
  try {
    send_frame(to, from, r, {}, data, owner);
  } catch (const peer_error&) {
  }
}

// ---- polling --------------------------------------------------------------------------------------

void engine::check_peers_if_due() {
  const std::int64_t now = heddle::core_detail::steady_now_ns();
  std::int64_t due = next_peer_check_ns_.load(std::memory_order_relaxed);
  if (now < due) return;
  if (!next_peer_check_ns_.compare_exchange_strong(due, now + 100'000'000)) return;  // every 100 ms
  transport_->check_peers();
  // A call inserted as its peer was lost may have escaped lost()'s sweep (pending_table.hpp): the
  // next two checks after a loss sweep again (two: a call still being inserted at the first is
  // skipped by it, and its caller then sees the flag or the second takes it).
  if (peers_.take_sweep()) sweep_lost();
}

void engine::sweep_lost() {
  for (node_id n = 0; n < nodes(); ++n) {
    if (!peers_.is_lost(n)) continue;
    const std::string what = peers_.loss_text(n);
    fail_pending(n, [&] { return std::make_exception_ptr(peer_lost(n, what)); });
  }
}

// The caller's patience is measured from its 64th look on: a reply that comes sooner (the usual
// case) costs no clock read.
void engine::poll_for_a_while(const heddle::core_detail::future_state_base* s, clock::time_point& deadline,
                              std::chrono::nanoseconds patience) {
  for (unsigned n = 1; !s->is_done(); ++n) {
    if (transport_->poll()) continue;
    if ((n & 63) == 0) {
      if (past(deadline, patience)) return;
      check_peers_if_due();
      // A direct call's peer lost: nothing else fails the call (end_direct_wait does).
      if (direct_.id != 0 && peers_.is_lost(direct_.to)) return;
    }
    spin_pause(n);
  }
}

bool engine::past(clock::time_point& deadline, std::chrono::nanoseconds patience) const {
  const auto now = clock::now();
  if (deadline == clock::time_point{}) deadline = now + patience;
  return now > deadline;
}

void engine::poll_within(const heddle::core_detail::future_state_base* s, std::chrono::nanoseconds patience) {
  clock::time_point deadline{};  // set at the first look at the clock
  for (unsigned n = 1; !s->is_done(); ++n) {
    if (progress_.try_lock()) {
      polling_thread = true;
      poll_for_a_while(s, deadline, patience);
      polling_thread = false;
      progress_.unlock();
      break;
    }
    progress_.ask_yield();
    if ((n & 63) == 0 && past(deadline, patience)) break;
    spin_pause(n);
  }
}

void engine::poll_until(const heddle::core_detail::future_state_base* s) {
  if (!has_receiver_ || heddle::core_detail::current_worker || polling_thread) return;
  poll_within(s, options_.caller_spin);
  if (!s->is_done()) progress_.wake_receiver();  // the receiver takes over while this thread sleeps
}

// sync's call. A thread that may poll for its reply (not a worker, not the polling thread already)
// and finds the progress lock free takes it before the send and keeps it until the reply: the call
// waits as direct_, which only this thread reads, instead of in the pending table. Elsewhere (a
// worker, a handler run inline, the lock taken, the loopback backend, a call to this node): the
// call as async's, then the wait as a future's (poll_until).
inline void engine::call_and_wait(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                                  std::span<const std::byte> args, pending_call* p,
                                  heddle::core_detail::future_state_base* s) {
  if (has_receiver_ && !heddle::core_detail::current_worker && !polling_thread && to != self() && progress_.try_lock())
      [[likely]]
    return call_directly(from, to, handler, how, args, p, s);
  call(from, to, handler, how, args, p);
  if (!s->is_done()) poll_until(s);  // at once back on a worker or the polling thread
}

// The progress lock held: polling_thread from here on, so that the send never waits for room (a
// frame the peer cannot take goes out from a task, as the receiver thread's do).
inline void engine::call_directly(node_id from, node_id to, std::uint32_t handler, heddle::strategy how,
                                  std::span<const std::byte> args, pending_call* p,
                                  heddle::core_detail::future_state_base* s) {
  polling_thread = true;
  const message_header::words packed = call_header(handler, how, args.size());
  if (!peers_.reachable(to)) [[unlikely]] {
    polling_thread = false;
    progress_.unlock();
    return fail_unreachable(to, p);
  }
  direct_ = {message_header::call_id_of(packed), to, p};
  std::exception_ptr failure;
  try {
    send_to_peer(from, to, packed, args, {}, no_owner);
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) [[unlikely]] {
    direct_.id = 0;
    polling_thread = false;
    progress_.unlock();
    return p->fail(std::move(failure));  // outside the catch block, as request_frame's
  }
  clock::time_point deadline{};  // set at the first look at the clock
  if (!s->is_done()) poll_for_a_while(s, deadline, options_.caller_spin);
  if (direct_.id != 0) [[unlikely]]
    return end_direct_wait();
  polling_thread = false;
  progress_.unlock();
}

// Into the table before the lock is given back: the next poller may find the reply at once.
void engine::end_direct_wait() {
  const direct_call d = direct_;
  direct_.id = 0;
  const bool waits = wait_in_table(d.id, d.to, d.call);  // or failed: its peer was lost
  polling_thread = false;
  progress_.unlock();
  if (waits) progress_.wake_receiver();  // the receiver polls for the reply while this thread sleeps
}

// sync's way from the call to its wait (calls.hpp), flattened as call is: the look for the session,
// the send and the start of the wait in the one function the caller's template calls; the poll
// loop itself (poll_for_a_while) stays a function of its own.
[[gnu::flatten]] void call_and_poll(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args,
                                    pending_call* p, heddle::core_detail::future_state_base* s) {
  engine* e = engine_or_fail(p);
  if (!e) [[unlikely]]
    return;
  e->call_and_wait(current_node_of(*e), to, handler, how, args.data(), p, s);
}

// ---- the open session -----------------------------------------------------------------------------

void engine::lost(node_id peer, const std::string& why) {
  if (!peers_.mark_lost(peer, why)) return;
  const std::string what = "heddle::offload: " + peers_.describe(peer) + " was lost: " + why;
  fail_pending(peer, [&] { return std::make_exception_ptr(peer_lost(peer, what)); });
}

}  // namespace heddle::am_detail
