// SPDX-License-Identifier: Apache-2.0
// The blocking workload on oneTBB, in a task_arena of p.threads that the calling thread joins.
// Compute chains are task_group tasks, each running its successor with g.run at its end. A light
// task's successor: a task run at once (noblock), a task that sleeps (blocking), a task that
// suspends itself until the timer thread resumes it (suspend), or a flow graph message that an
// async_node hands to the timer thread, which try_puts it at the start time (async_node), or a
// task that heddle's timer engine enqueues into the arena at the start time (heddle_timer).
#include <tbb/flow_graph.h>
#include <tbb/task.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <heddle/async/tbb_arena.hpp>
#include <heddle/heddle.hpp>

#include <memory>
#include <optional>
#include <thread>

#include "runs.hpp"
#include "timer_thread.hpp"

namespace heddle::bench::blocking {

namespace {

struct env {
  run_record& r;
  tbb::task_group& g;
  tbb_mode mode;
  timer_thread* timer;
  tbb::task_arena* arena = nullptr;
  heddle::runtime* engines = nullptr;  // heddle_timer: the runtime whose timer engine waits
};

void compute_step(env& e, unsigned c, unsigned k) {
  e.r.compute(c, k);
  if (k + 1 < e.r.p().compute_length) e.g.run([&e, c, k] { compute_step(e, c, k + 1); });
}

void spawn_compute(env& e) {
  for (unsigned c = 0; c < e.r.p().compute_chains; ++c) e.g.run([&e, c] { compute_step(e, c, 0); });
}

void light_step(env& e, unsigned c, unsigned i) {
  const clock::time_point next_at = e.r.light(c, i);
  if (i + 1 == e.r.p().comm_length) return;
  switch (e.mode) {
    case tbb_mode::noblock: e.g.run([&e, c, i] { light_step(e, c, i + 1); }); break;
    case tbb_mode::blocking:
      e.g.run([&e, c, i, next_at] {
        std::this_thread::sleep_until(next_at);
        light_step(e, c, i + 1);
      });
      break;
    case tbb_mode::suspend:
      e.g.run([&e, c, i, next_at] {
        tbb::task::suspend([&](tbb::task::suspend_point sp) { e.timer->at(next_at, [sp] { tbb::task::resume(sp); }); });
        light_step(e, c, i + 1);
      });
      break;
    case tbb_mode::heddle_timer: {
      // Deferred, so that the group counts the successor while its timer waits.
      tbb::task_handle next = e.g.defer([&e, c, i] { light_step(e, c, i + 1); });
      (void)heddle::then_in_arena(heddle::sleep_until(*e.engines, next_at), *e.arena,
                                  [&e, next = std::make_shared<tbb::task_handle>(std::move(next))]() mutable {
                                    e.g.run(std::move(*next));
                                  });
      break;
    }
    case tbb_mode::async_node: break;  // not a task_group chain: see run_graph
  }
}

// The communication chains as a flow graph: light (function_node) -> wait (async_node) -> light.
// The async_node's body hands the message and its gateway to the timer thread and returns at once;
// the timer thread try_puts the message into the graph at the start time.
struct message {
  unsigned c = 0, i = 0;
  clock::time_point next_at{};  // the earliest start of light task i + 1
};

void run_graph(env& e) {
  namespace flow = tbb::flow;
  using wait_node_t = flow::async_node<message, message>;
  run_record& r = e.r;
  flow::graph graph;  // made inside the arena: its tasks run there
  flow::function_node<message, message> light(graph, flow::unlimited, [&r](const message& m) {
    return message{m.c, m.i, r.light(m.c, m.i)};
  });
  // What the async_node's body does: the wait goes to the timer thread, the body returns at once.
  auto hand_to_timer = [&e](const message& m, wait_node_t::gateway_type& gateway) {
    if (m.i + 1 == e.r.p().comm_length) return;
    gateway.reserve_wait();
    e.timer->at(m.next_at, [&gateway, next = message{m.c, m.i + 1, {}}] {
      gateway.try_put(next);
      gateway.release_wait();
    });
  };
  wait_node_t wait(graph, flow::unlimited, hand_to_timer);
  flow::make_edge(light, wait);
  flow::make_edge(wait, light);
  // The first light task of each chain runs right away (as in every variant) and hands its
  // successor's wait to the timer through the node's gateway, as the node's body would.
  for (unsigned c = 0; c < r.p().comm_chains; ++c) hand_to_timer(message{c, 0, r.light(c, 0)}, wait.gateway());
  spawn_compute(e);
  e.g.wait();
  graph.wait_for_all();
}

}  // namespace

double run_tbb(const params& p, run_record& r, tbb_mode mode) {
  tbb::task_arena arena(int(p.threads));
  arena.initialize();
  std::optional<timer_thread> timer;
  if (mode == tbb_mode::async_node || mode == tbb_mode::suspend) timer.emplace();
  // heddle_timer: one idle worker hosts the engines; the work stays in the arena.
  std::optional<heddle::runtime> engines;
  if (mode == tbb_mode::heddle_timer) engines.emplace(1);
  const auto t0 = clock::now();
  arena.execute([&] {
    tbb::task_group g;
    env e{r, g, mode, timer ? &*timer : nullptr, &arena, engines ? &*engines : nullptr};
    if (mode == tbb_mode::async_node) {
      run_graph(e);
    } else {
      // The first light task of each chain runs right away, then the compute chains are spawned.
      for (unsigned c = 0; c < p.comm_chains; ++c) light_step(e, c, 0);
      spawn_compute(e);
      g.wait();
    }
  });
  const auto t1 = clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace heddle::bench::blocking
