// SPDX-License-Identifier: Apache-2.0
// heddle's side of the suite: the serial queue as a lock (q.async and q.sync from heddle tasks),
// items through one queue, group enter/leave, and idle queues.
#include <heddle/heddle.hpp>

#include <atomic>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "threads.hpp"
#include "workload.hpp"

namespace heddle::bench::dispatch {

namespace {

// Runs body(k) for k in [0, producers) as heddle tasks (one piece each) from a root task, then
// finish() in the root task; seconds from the root task's start to finish()'s return.
template <class Body, class Finish>
double on_heddle_tasks(heddle::runtime& rt, unsigned producers, Body body, Finish finish) {
  return rt
      .task([&] {
        const auto t0 = clock::now();
        heddle::parallel_for(
            0u, producers, [&](unsigned k) { body(k); }, 1);
        finish();
        return seconds(clock::now() - t0);
      })
      .get();
}

}  // namespace

double lock_serialq_async(heddle::runtime& rt, const lock_params& p, shared_state& s) {
  heddle::serial_queue q(rt, "lock");
  return on_heddle_tasks(
      rt, p.producers,
      [&](unsigned k) {
        for (std::uint64_t i = p.from(k); i < p.from(k + 1); ++i) q.async([&s, i] { critical_section(s, i); });
      },
      // Every producer has returned: this item is behind all of theirs (FIFO), so its return means
      // the queue has run everything.
      [&] { q.sync([] {}); });
}

double lock_serialq_sync(heddle::runtime& rt, const lock_params& p, shared_state& s) {
  heddle::serial_queue q(rt, "lock");
  return on_heddle_tasks(
      rt, p.producers,
      [&](unsigned k) {
        for (std::uint64_t i = p.from(k); i < p.from(k + 1); ++i) q.sync([&s, i] { critical_section(s, i); });
      },
      [] {});
}

double through_serialq(heddle::runtime& rt, producer_kind who, std::uint64_t n, std::uint64_t& ran) {
  heddle::serial_queue q(rt, "throughput");
  std::uint64_t count = 0;  // touched only by the queue's items
  auto produce = [&](std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t i = from; i < to; ++i) q.async([&count] { ++count; });
  };
  double s = 0;
  switch (who) {
    case producer_kind::one_task:
      s = on_heddle_tasks(
          rt, 1, [&](unsigned) { produce(0, n); }, [&] { q.sync([] {}); });
      break;
    case producer_kind::all_workers: {
      const unsigned p = rt.num_threads();
      s = on_heddle_tasks(
          rt, p, [&](unsigned k) { produce(n * k / p, n * (k + 1) / p); }, [&] { q.sync([] {}); });
      break;
    }
    case producer_kind::outside: {
      const auto t0 = clock::now();
      produce(0, n);
      q.sync([] {});
      s = seconds(clock::now() - t0);
      break;
    }
  }
  ran = q.sync([&count] { return count; });
  return s;
}

double group_pairs(group_mode mode, std::uint64_t n) {
  heddle::group g;
  std::optional<heddle::future<void>> zero;
  if (mode == group_mode::above_zero) {
    g.enter();
    zero = g.when_empty();  // due at the next zero: must not be ready until the final leave
  }
  const auto t0 = clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    g.enter();
    g.leave();
  }
  const double s = seconds(clock::now() - t0);
  if (mode == group_mode::above_zero) {
    if (g.pending() != 1 || zero->is_ready())
      throw std::runtime_error("heddle group: the count left 1 (or its notification fired) during the pairs");
    g.leave();
    if (!zero->is_ready()) throw std::runtime_error("heddle group: the final leave did not fire the notification");
  }
  if (g.pending() != 0 || !g.when_empty().is_ready())
    throw std::runtime_error("heddle group: not empty after the pairs");
  return s;
}

double group_pairs_contended(unsigned threads, std::uint64_t n_per_thread) {
  heddle::group g;
  const double s = on_threads(threads, [&](unsigned) {
    for (std::uint64_t i = 0; i < n_per_thread; ++i) {
      g.enter();
      g.leave();
    }
  });
  if (g.pending() != 0 || !g.when_empty().is_ready())
    throw std::runtime_error("heddle group, contended: not empty after the pairs");
  return s;
}

memory_run idle_serial_queues(heddle::runtime& rt, std::uint64_t n, bool labelled) {
  auto label_of = [labelled](char* buf, std::size_t size, std::uint64_t i) {
    return labelled ? std::string_view(buf, std::size_t(std::snprintf(buf, size, "q%llu", (unsigned long long)i)))
                    : std::string_view();
  };
  char buf[32];
  memory_run r;
  r.n = n;
  trim_heap();
  const double heap0 = heap_bytes(), rss0 = rss_bytes();
  {
    std::vector<heddle::serial_queue> queues;
    queues.reserve(n);  // counted: the handle is part of what a queue costs its owner
    const auto t0 = clock::now();
    for (std::uint64_t i = 0; i < n; ++i) queues.emplace_back(rt, label_of(buf, sizeof buf, i));
    r.seconds = seconds(clock::now() - t0);
    r.heap_bytes = heap_bytes() - heap0;
    r.rss_bytes = rss_bytes() - rss0;

    // Outside the measurement: every queue carries its label, and the first and last still work.
    for (std::uint64_t i = 0; i < n; ++i)
      if (std::string_view(queues[i].label()) != label_of(buf, sizeof buf, i))
        throw std::runtime_error("idle serial queues: queue " + std::to_string(i) + " has label '" + queues[i].label() +
                                 "'");
    if (n) {
      std::atomic<int> ran{0};  // two queues: their items may run at once
      queues.front().async([&ran] { ++ran; });
      queues.back().async([&ran] { ++ran; });
      queues.front().sync([] {});
      queues.back().sync([] {});
      if (ran.load() != 2) throw std::runtime_error("idle serial queues: the items did not run");
    }
  }
  return r;
}

}  // namespace heddle::bench::dispatch
