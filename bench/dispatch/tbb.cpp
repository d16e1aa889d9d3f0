// SPDX-License-Identifier: Apache-2.0
// oneTBB's side of the suite: tbb::spin_mutex and tbb::queuing_mutex taken in oneTBB tasks, and a
// flow-graph function_node of concurrency 1 fed by try_put from oneTBB tasks. Each runs in a
// tbb::task_arena of P threads that the calling thread joins.
//
// The node's policy is queueing_lightweight, oneTBB's fastest serial node (oneTBB 2021.8,
// flow_graph.h; _flow_graph_node_impl.h: try_put_task_impl): a message that finds the node free
// runs the body at once on the thread that puts it, no task made; one that finds it busy waits in
// the node's buffer. Plain `queueing` runs every body as a task of its own.
#include <tbb/blocked_range.h>
#include <tbb/flow_graph.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/queuing_mutex.h>
#include <tbb/spin_mutex.h>
#include <tbb/task_arena.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "threads.hpp"
#include "workload.hpp"

namespace heddle::bench::dispatch {

namespace {

using serial_node = tbb::flow::function_node<std::uint64_t, tbb::flow::continue_msg, tbb::flow::queueing_lightweight>;

// body(k) for k in [0, producers), one oneTBB task each, then finish(); called inside the arena.
// Seconds from the start of the loop to finish()'s return.
template <class Body, class Finish>
double on_tbb_tasks(unsigned producers, Body body, Finish finish) {
  const auto t0 = clock::now();
  tbb::parallel_for(
      tbb::blocked_range<unsigned>(0, producers, 1),
      [&](const tbb::blocked_range<unsigned>& r) {
        for (unsigned k = r.begin(); k != r.end(); ++k) body(k);
      },
      tbb::simple_partitioner());
  finish();
  return seconds(clock::now() - t0);
}

template <class Mutex>
double lock_with(tbb::task_arena& arena, const lock_params& p, shared_state& s) {
  struct alignas(64) padded {
    Mutex m;
  } pm;
  return arena.execute([&] {
    return on_tbb_tasks(
        p.producers,
        [&](unsigned k) {
          for (std::uint64_t i = p.from(k); i < p.from(k + 1); ++i) {
            typename Mutex::scoped_lock lock(pm.m);
            critical_section(s, i);
          }
        },
        [] {});
  });
}

}  // namespace

double lock_tbb_spin_mutex(tbb::task_arena& arena, const lock_params& p, shared_state& s) {
  return lock_with<tbb::spin_mutex>(arena, p, s);
}

double lock_tbb_queuing_mutex(tbb::task_arena& arena, const lock_params& p, shared_state& s) {
  return lock_with<tbb::queuing_mutex>(arena, p, s);
}

double lock_tbb_function_node(tbb::task_arena& arena, const lock_params& p, shared_state& s) {
  return arena.execute([&] {
    tbb::flow::graph g;  // made inside the arena: its tasks run there
    serial_node node(g, 1, [&s](std::uint64_t item) {
      critical_section(s, item);
      return tbb::flow::continue_msg();
    });
    return on_tbb_tasks(
        p.producers,
        [&](unsigned k) {
          for (std::uint64_t i = p.from(k); i < p.from(k + 1); ++i) node.try_put(i);
        },
        [&] { g.wait_for_all(); });
  });
}

double through_tbb_function_node(tbb::task_arena& arena, unsigned producers, std::uint64_t n, std::uint64_t& ran) {
  std::uint64_t count = 0;  // touched only by the node's body, one message at a time
  const double s = arena.execute([&] {
    tbb::flow::graph g;
    serial_node node(g, 1, [&count](std::uint64_t) {
      ++count;
      return tbb::flow::continue_msg();
    });
    return on_tbb_tasks(
        producers,
        [&](unsigned k) {
          for (std::uint64_t i = n * k / producers; i < n * (k + 1) / producers; ++i) node.try_put(i);
        },
        [&] { g.wait_for_all(); });
  });
  ran = count;
  return s;
}

memory_run idle_tbb_function_nodes(tbb::task_arena& arena, std::uint64_t n) {
  memory_run r;
  r.n = n;
  arena.execute([&] {
    tbb::flow::graph g;
    std::uint64_t ran = 0;
    auto body = [&ran](std::uint64_t) {
      ++ran;
      return tbb::flow::continue_msg();
    };
    trim_heap();
    const double heap0 = heap_bytes(), rss0 = rss_bytes();
    std::vector<std::unique_ptr<serial_node>> nodes;
    nodes.reserve(n);
    const auto t0 = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) nodes.push_back(std::make_unique<serial_node>(g, tbb::flow::serial, body));
    r.seconds = seconds(clock::now() - t0);
    r.heap_bytes = heap_bytes() - heap0;
    r.rss_bytes = rss_bytes() - rss0;
    if (n) {
      nodes.front()->try_put(0);
      g.wait_for_all();
      nodes.back()->try_put(1);
      g.wait_for_all();
      if (ran != 2) throw std::runtime_error("idle function_nodes: the messages did not run");
    }
  });
  return r;
}

}  // namespace heddle::bench::dispatch
