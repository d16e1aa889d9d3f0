// SPDX-License-Identifier: Apache-2.0
// Calls on other nodes: heddle::offload::async, sync and ping; broadcast and for_each_node to every node.
//
//   int scale(int a, std::string s);
//   heddle::future<int> f = heddle::offload::async(1, heddle::f2f<&scale>(1, std::string("x")));
//   int v = heddle::offload::sync(1, heddle::f2f<&scale>(2, std::string("y")));
//   heddle::offload::ping(1, heddle::f2f<&log_line>(std::string("hi")));
//
// The arguments are serialised when the call is made; the target runs the function by the strategy
// given: express, a heddle task on the priority lane of the target's runtime (a worker, woken if
// parked); strategy::short_task, on the thread that receives the message, which suits functions of a
// few microseconds and nothing that waits; normal and asap as for any successor. With no strategy
// (the overloads at the end), the target decides per function: short ones as short_task, the rest
// as express (the rule below, docs/am.md). Any node may call any node, itself included, and a
// function running on a target may offload in turn.
//
// Waiting on an offload's future (get, wait, sync) on a thread that is not a worker polls the
// transport for the reply (the round trip then costs the transport's latency, with no thread
// woken); on a worker it runs other tasks, like any future.
//
// Failures arrive through the future: remote_error when the function threw there, peer_lost when
// the node died or its connection broke (within a second), unknown_handler or decode_error when the
// two sides disagree, session_error when no session is open.
//
// Thread safety: every call below is thread-safe: any thread of a process with an open session,
// the functions that run on a node included, any number at once.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/am/detail/calls.hpp"
#include "heddle/am/errors.hpp"
#include "heddle/am/functor.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::offload {

// This node's number, from 0 to num_nodes() - 1. Inside a function run by the loopback backend,
// the node it runs on. Thread-safe; session_error when no session is open, as num_nodes().
HEDDLE_EXPORT node_id this_node();
HEDDLE_EXPORT node_id num_nodes();

// Runs `call` on `node`; the future holds its result. Thread-safe; never waits for the reply.
template <class Call>
future<typename Call::result_type> async(node_id node, const Call& call, strategy how) {
  using R = typename Call::result_type;
  writer args;
  call.write_args(args);
  auto* p = heddle::core_detail::make_record<am_detail::pending_result<R>>();
  future<R> f = p->get_future();
  am_detail::send_call(node, Call::index(), how, args, p);
  return f;
}

// Runs `call` on `node` and waits for its result (rethrowing its failure), as async(...).get()
// does, with the call's state on this stack rather than in a record that a future releases. A
// thread that is not a worker, when no other thread polls the transport, polls for the reply
// itself from before the send on (the direct call, docs/am.md): no pending-table slot, and a
// plain store to publish the result; it hands the wait to the session's receiver thread after
// session_options::caller_spin and then sleeps on the state. Thread-safe; blocks until the reply
// (or the failure) is there.
template <class Call>
typename Call::result_type sync(node_id node, const Call& call, strategy how) {
  writer args;
  call.write_args(args);
  am_detail::pending_result<typename Call::result_type, /*Owned=*/false> p;
  am_detail::call_and_poll(node, Call::index(), how, args, &p, &p);
  heddle::core_detail::force(&p);  // a worker runs other tasks meanwhile; another thread has polled
  return p.take();
}

// Runs `call` on every node but this one; the future holds their results in node order (this
// node's place left out: num_nodes() - 1 of them, none in a session of one node). The call travels
// along a binary tree of the nodes (each passes it on to two others before it runs it), so this
// node sends two frames and waits for two replies however many nodes there are; a node's result
// reaches the caller through about log2(N) of them. Fails, once every node has answered or been
// found lost, with the first failure in node order: remote_error naming the node where the function
// threw, peer_lost naming a node that was lost (and the nodes below it in the tree, which the call
// may not have reached, fail with it). Costs, besides the frames: one heap allocation on this node,
// the result vector, and none on the others, while the session has at most 16 nodes and the entries
// a node gathers (13 bytes and a result's encoding for each node below it) fit in 64 bytes; the
// tree's records come from the runtime's block caches. Thread-safe; never waits for the replies.
template <class Call>
future<std::vector<typename Call::result_type>> broadcast(const Call& call, strategy how) {
  using R = typename Call::result_type;
  static_assert(!std::is_void_v<R>, "heddle::offload::broadcast: the function returns void: use for_each_node");
  writer args;
  call.write_args(args);
  auto* p = heddle::core_detail::make_record<am_detail::pending_tree<std::vector<R>>>();
  future<std::vector<R>> f = p->get_future();
  am_detail::send_tree(Call::index(), how, args, p);
  return f;
}

// Runs `call` on every node but this one, as broadcast does; the future is ready when every node has
// run it (its results, if any, are dropped), or fails as broadcast's does. Thread-safe; never
// waits for the replies.
template <class Call>
future<void> for_each_node(const Call& call, strategy how) {
  writer args;
  call.write_args(args);
  auto* p = heddle::core_detail::make_record<am_detail::pending_tree<void>>();
  future<void> f = p->get_future();
  am_detail::send_tree(Call::index(), how, args, p);
  return f;
}

// Runs `call` on `node` without a reply: fire and forget. A failure there is printed on the
// target's standard error, naming the caller; the call is not lost when the sender's session ends
// (the target finishes what it received before it says goodbye). Thread-safe; never waits for the
// target.
template <class Call>
void ping(node_id node, const Call& call, strategy how) {
  writer args;
  call.write_args(args);
  am_detail::send_post(node, Call::index(), how, args);
}

// The same calls with no strategy: the target applies the default rule (docs/am.md, "Calls"). A
// function whose last runs on the target's workers took under 5 us each (4 in a row at first, more
// after each time it was sent back) runs on the session's receiver thread, as short_task (arguments
// within 256 bytes); every other call runs as express, on a worker, measured there. A run on the
// receiver thread over 5 us twice in a row, or over 200 us once, sends the function back to the
// workers. Should such a run block or last, a standby thread takes over the target's message
// handling within about 2 ms: the target's other calls are held up that long at most, and run as
// express until it returns. A function may offload and wait in either place.
template <class Call>
future<typename Call::result_type> async(node_id node, const Call& call) {
  return offload::async(node, call, am_detail::by_rule);
}
template <class Call>
typename Call::result_type sync(node_id node, const Call& call) {
  return offload::sync(node, call, am_detail::by_rule);
}
template <class Call>
future<std::vector<typename Call::result_type>> broadcast(const Call& call) {
  return offload::broadcast(call, am_detail::by_rule);
}
template <class Call>
future<void> for_each_node(const Call& call) {
  return offload::for_each_node(call, am_detail::by_rule);
}
template <class Call>
void ping(node_id node, const Call& call) {
  offload::ping(node, call, am_detail::by_rule);
}

}  // namespace heddle::offload
