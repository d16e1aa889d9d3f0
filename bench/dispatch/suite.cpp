// SPDX-License-Identifier: Apache-2.0
// The dispatch suite (workload.hpp): heddle's serial queue used as a lock against std::mutex,
// oneTBB's spin_mutex and queuing_mutex and a oneTBB function_node of concurrency 1
// (queueing_lightweight, oneTBB's fastest serial node: tbb.cpp); items through one queue; a group's
// enter/leave; the memory of an idle queue. Every variant of every section runs in one interleaved
// sequence (the harness's shuffled rounds), so that the machine's fast and slow phases hit all of
// them alike, and every ratio is computed round by round from the samples of the same round.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"
#include "heddle_counters.hpp"
#include "heddle_runtimes.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "tbb_arenas.hpp"
#include "workload.hpp"

namespace heddle::bench::dispatch {

namespace {

enum class lock_kind { serialq_async, serialq_sync, mutex_threads, mutex_heddle, tbb_spin, tbb_queuing, tbb_node };

struct lock_def {
  lock_kind kind;
  const char* name;
  const char* how;
};

const lock_def lock_defs[] = {
    {lock_kind::serialq_async, "heddle serial_queue async",
     "`q.async(cs)` from P heddle tasks, then one `q.sync` (drained)"},
    {lock_kind::serialq_sync, "heddle serial_queue sync", "`q.sync(cs)` from P heddle tasks"},
    {lock_kind::mutex_threads, "std::mutex, std::threads", "`std::lock_guard` in P std::threads"},
    {lock_kind::mutex_heddle, "std::mutex, heddle tasks", "`std::lock_guard` in P heddle tasks"},
    {lock_kind::tbb_spin, "oneTBB spin_mutex", "`scoped_lock` in P oneTBB tasks"},
    {lock_kind::tbb_queuing, "oneTBB queuing_mutex", "`scoped_lock` in P oneTBB tasks"},
    {lock_kind::tbb_node, "oneTBB function_node(1, queueing_lightweight)",
     "`try_put(item)` from P oneTBB tasks, then `wait_for_all`"},
};

const char* const lock_config = "lock";
const char* const through_config = "throughput";
const char* const group_config = "group";
const char* const idle_config = "idle queues";

const char* const through_one = "heddle serial_queue, 1 producer task";
const char* const through_all = "heddle serial_queue, a producer task per worker";
const char* const through_outside = "heddle serial_queue, producer outside the runtime";
const char* const through_node_one = "oneTBB function_node(1, queueing_lightweight), 1 producer task";
const char* const through_node_all = "oneTBB function_node(1, queueing_lightweight), a producer task per thread";

const char* const group_zero = "heddle group, back to zero each pair";
const char* const group_above = "heddle group, count kept above zero";
const char* const group_contended = "heddle group, from P threads";
const char* const atomic_one = "std::atomic add+sub (floor)";
const char* const atomic_contended = "std::atomic add+sub (floor), from P threads";

const char* const idle_labelled = "heddle serial_queue, label \"q<i>\"";
const char* const idle_unlabelled = "heddle serial_queue, no label";
const char* const idle_tbb = "oneTBB function_node(serial, queueing_lightweight)";

struct stat {
  double median = 0, min = 0, max = 0;
};
stat stat_of(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}
nlohmann::json stat_json(const stat& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}}; }

std::string fixed(double x, int decimals) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}
// Items per second in millions, from a count and a time.
std::string mps(double items, double s) { return fixed(items / s * 1e-6, 2); }

// The memory runs of one idle-queue variant (the warm-up's is not kept).
struct memory_runs {
  int calls = 0;
  std::vector<memory_run> runs;
  stat of(double (*f)(const memory_run&)) const {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(f(r));
    return stat_of(v);
  }
  stat heap_per() const {
    return of([](const memory_run& r) { return r.heap_bytes / double(r.n); });
  }
  stat rss_per() const {
    return of([](const memory_run& r) { return r.rss_bytes / double(r.n); });
  }
  stat ns_per() const {
    return of([](const memory_run& r) { return r.seconds * 1e9 / double(r.n); });
  }
};

void run(const options& opt, nlohmann::json& report) {
  const auto threads = opt.threads_or({2});
  const unsigned main_threads = headline_threads(threads);
  const std::uint64_t lock_n = opt.pick<std::uint64_t>(4'000, 500'000, 2'000'000, 8'000'000);
  const std::uint64_t through_n = opt.pick<std::uint64_t>(4'000, 500'000, 2'000'000, 8'000'000);
  const std::uint64_t group_n = opt.pick<std::uint64_t>(10'000, 2'000'000, 10'000'000, 40'000'000);
  const std::uint64_t group_contended_n = group_n / 10;  // per thread
  const std::uint64_t queues_n = opt.pick<std::uint64_t>(2'000, 250'000, 1'000'000, 1'000'000);
  const std::uint64_t nodes_n = opt.pick<std::uint64_t>(500, 25'000, 100'000, 100'000);

  std::printf("## dispatch: a serial queue as a lock, items through one queue, group enter/leave, idle queues; "
              "%d interleaved repetitions after a warm-up %s\n\n",
              opt.reps, opt.scale_name());

  heddle_runtimes runtimes(threads);
  tbb_arenas arenas(threads);
  std::map<std::string, heddle_counters> counters;
  const std::uint64_t mix = expected_mixsum(lock_n);

  std::vector<variant> vs;
  for (unsigned t : threads) {
    heddle::runtime* rt = &runtimes[t];
    tbb::task_arena* arena = &arenas[t];
    const lock_params p{t, lock_n};
    for (const lock_def& d : lock_defs) {
      heddle_counters* count = nullptr;
      if (d.kind == lock_kind::serialq_async || d.kind == lock_kind::serialq_sync)
        count = &counters[std::string(d.name) + " " + std::to_string(t) + "t"];
      vs.push_back({d.name, t, lock_config, [d, p, rt, arena, mix, count] {
                      shared_state s;
                      auto once = [&] {
                        switch (d.kind) {
                          case lock_kind::serialq_async: return lock_serialq_async(*rt, p, s);
                          case lock_kind::serialq_sync: return lock_serialq_sync(*rt, p, s);
                          case lock_kind::mutex_threads: return lock_mutex_threads(p, s);
                          case lock_kind::mutex_heddle: return lock_mutex_heddle(*rt, p, s);
                          case lock_kind::tbb_spin: return lock_tbb_spin_mutex(*arena, p, s);
                          case lock_kind::tbb_queuing: return lock_tbb_queuing_mutex(*arena, p, s);
                          case lock_kind::tbb_node: return lock_tbb_function_node(*arena, p, s);
                        }
                        return 0.0;
                      };
                      const double secs = count ? (*count)(*rt, once) : once();
                      check_state(s, p.n, mix, d.name);
                      return secs;
                    }});
    }

    auto through = [through_n](const char* who, auto f) {
      return [who, f, through_n] {
        std::uint64_t ran = 0;
        const double s = f(ran);
        if (ran != through_n)
          throw std::runtime_error(std::string(who) + ": " + std::to_string(ran) + " items ran, expected " +
                                   std::to_string(through_n));
        return s;
      };
    };
    vs.push_back({through_one, t, through_config, through(through_one, [rt, through_n](std::uint64_t& ran) {
                    return through_serialq(*rt, producer_kind::one_task, through_n, ran);
                  })});
    vs.push_back({through_all, t, through_config, through(through_all, [rt, through_n](std::uint64_t& ran) {
                    return through_serialq(*rt, producer_kind::all_workers, through_n, ran);
                  })});
    vs.push_back({through_outside, t, through_config, through(through_outside, [rt, through_n](std::uint64_t& ran) {
                    return through_serialq(*rt, producer_kind::outside, through_n, ran);
                  })});
    vs.push_back({through_node_one, t, through_config,
                  through(through_node_one, [arena, through_n](std::uint64_t& ran) {
                    return through_tbb_function_node(*arena, 1, through_n, ran);
                  })});
    vs.push_back({through_node_all, t, through_config,
                  through(through_node_all, [arena, t, through_n](std::uint64_t& ran) {
                    return through_tbb_function_node(*arena, t, through_n, ran);
                  })});

    if (t >= 2) {
      vs.push_back({group_contended, t, group_config,
                    [t, group_contended_n] { return group_pairs_contended(t, group_contended_n); }});
      vs.push_back({atomic_contended, t, group_config,
                    [t, group_contended_n] { return atomic_pairs_contended(t, group_contended_n); }});
    }
  }
  vs.push_back({group_zero, 1, group_config, [group_n] { return group_pairs(group_mode::back_to_zero, group_n); }});
  vs.push_back({group_above, 1, group_config, [group_n] { return group_pairs(group_mode::above_zero, group_n); }});
  vs.push_back({atomic_one, 1, group_config, [group_n] { return atomic_pairs(group_n); }});

  std::map<std::string, memory_runs> memory;
  heddle::runtime* idle_rt = &runtimes[main_threads];
  tbb::task_arena* idle_arena = &arenas[main_threads];
  for (const char* name : {idle_labelled, idle_unlabelled, idle_tbb}) {
    memory_runs* m = &memory[name];
    vs.push_back({name, 1, idle_config, [name, m, idle_rt, idle_arena, queues_n, nodes_n] {
                    const std::string who = name;
                    const memory_run r = who == idle_tbb ? idle_tbb_function_nodes(*idle_arena, nodes_n)
                                                         : idle_serial_queues(*idle_rt, queues_n, who == idle_labelled);
                    if (m->calls++ > 0) m->runs.push_back(r);
                    return r.seconds;
                  }});
  }

  const auto rs = run_interleaved(vs, opt.reps);

  // ---- lock
  std::printf("### lock: %llu critical sections on one shared state from P producers, N/P each (P = threads)\n\n",
              (unsigned long long)lock_n);
  std::printf("| variant | how | threads | median ms | min–max ms | M items/s | throughput vs best std::mutex | "
              "throughput vs best oneTBB |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  auto lock_name = [&](lock_kind k) {
    for (const lock_def& d : lock_defs)
      if (d.kind == k) return d.name;
    return "";
  };
  auto lock_result = [&](lock_kind k, unsigned t) -> const result& { return find(rs, lock_name(k), t, lock_config); };
  auto lock_time = [&](lock_kind k, unsigned t) { return lock_result(k, t).median(); };
  // The reference std::mutex is the faster of its two ways (by median) at t; every ratio against it
  // then pairs the rounds of that one row.
  auto best_mutex_way = [&](unsigned t) {
    return lock_time(lock_kind::mutex_heddle, t) < lock_time(lock_kind::mutex_threads, t) ? lock_kind::mutex_heddle
                                                                                          : lock_kind::mutex_threads;
  };
  auto best_mutex = [&](unsigned t) { return lock_time(best_mutex_way(t), t); };
  // The reference against oneTBB is its fastest way to serialise work in this run (by median), not a
  // chosen one: which of them wins depends on the machine's phase and the thread count.
  const lock_kind tbb_ways[] = {lock_kind::tbb_spin, lock_kind::tbb_queuing, lock_kind::tbb_node};
  auto best_tbb_way = [&](unsigned t) {
    lock_kind best = tbb_ways[0];
    for (lock_kind k : tbb_ways)
      if (lock_time(k, t) < lock_time(best, t)) best = k;
    return best;
  };
  auto best_tbb = [&](unsigned t) { return lock_time(best_tbb_way(t), t); };
  for (unsigned t : threads) {
    const double items = double(lock_n);
    for (const lock_def& d : lock_defs) {
      const result& r = find(rs, d.name, t, lock_config);
      std::printf("| %s | %s | %u | %s | %s–%s | %s | %s | %s |\n", d.name, d.how, t,
                  fixed(r.median() * 1e3, 2).c_str(), fixed(r.min() * 1e3, 2).c_str(), fixed(r.max() * 1e3, 2).c_str(),
                  mps(items, r.median()).c_str(), fixed(best_mutex(t) / r.median(), 2).c_str(),
                  fixed(best_tbb(t) / r.median(), 2).c_str());
    }
  }
  std::printf("\nThe critical section (cs): ++counter, counter's fmix64 added to a sum, the item added to one of 8 "
              "slots (two cache lines), the same in every variant; checked exactly after every run. Time: from the "
              "producers' start until every critical section has run (the async queue: until a final q.sync "
              "returns). M items/s = %llu / median. \"throughput vs best std::mutex\": this variant's items/s over "
              "the faster std::mutex row's at the same P, from the medians (> 1: faster than std::mutex); \"vs best "
              "oneTBB\": the same over the fastest of the three oneTBB rows. serialq_throughput_vs_mutex and "
              "serialq_throughput_vs_best_tbb use the async row against the same reference rows, round by round. "
              "With every worker producing, the queue's drain task runs once a producer's piece is done: the async "
              "row is the contended enqueues plus the drain of what is left; its records come from heddle's block "
              "cache, whose free lists the earlier runs in this process have reordered.\n\n",
              (unsigned long long)lock_n);

  // ---- throughput
  std::printf("### throughput: %llu trivial items (++count) through one serial queue\n\n",
              (unsigned long long)through_n);
  std::printf("| variant | threads | median ms | min–max ms | M items/s |\n|---|---:|---:|---:|---:|\n");
  for (unsigned t : threads)
    for (const char* name : {through_one, through_all, through_outside, through_node_one, through_node_all}) {
      const result& r = find(rs, name, t, through_config);
      std::printf("| %s | %u | %s | %s–%s | %s |\n", name, t, fixed(r.median() * 1e3, 2).c_str(),
                  fixed(r.min() * 1e3, 2).c_str(), fixed(r.max() * 1e3, 2).c_str(),
                  mps(double(through_n), r.median()).c_str());
    }
  std::printf("\nthreads: the runtime's workers (oneTBB: the arena's threads). Time: from the first enqueue until a "
              "final q.sync returns (oneTBB: wait_for_all). The outside producer is the calling thread, not a "
              "worker: its items come from the record depot one at a time.\n\n");

  // ---- group
  std::printf("### group: enter()+leave() pairs\n\n");
  std::printf(
      "| variant | threads | pairs per thread | ns per pair (median) | min–max ns |\n|---|---:|---:|---:|---:|\n");
  auto pair_ns = [&](const char* name, unsigned t, std::uint64_t n) {
    const result& r = find(rs, name, t, group_config);
    return stat{r.median() * 1e9 / double(n), r.min() * 1e9 / double(n), r.max() * 1e9 / double(n)};
  };
  std::vector<std::tuple<const char*, unsigned, std::uint64_t>> group_rows{
      {group_zero, 1, group_n}, {group_above, 1, group_n}, {atomic_one, 1, group_n}};
  for (unsigned t : threads)
    if (t >= 2) {
      group_rows.emplace_back(group_contended, t, group_contended_n);
      group_rows.emplace_back(atomic_contended, t, group_contended_n);
    }
  for (auto& [name, t, n] : group_rows) {
    const stat s = pair_ns(name, t, n);
    std::printf("| %s | %u | %llu | %s | %s–%s |\n", name, t, (unsigned long long)n, fixed(s.median, 2).c_str(),
                fixed(s.min, 2).c_str(), fixed(s.max, 2).c_str());
  }
  std::printf("\nns per pair = time / pairs per thread (from P threads: each thread's cost per pair while all of them "
              "run).\n\n");

  // ---- idle queues
  std::printf("### idle queues\n\n");
  std::printf(
      "| variant | n | heap B each (median, min–max) | RSS B each | ns to make one |\n|---|---:|---:|---:|---:|\n");
  for (const char* name : {idle_labelled, idle_unlabelled, idle_tbb}) {
    const memory_runs& m = memory.at(name);
    const stat h = m.heap_per(), r = m.rss_per(), c = m.ns_per();
    std::printf("| %s | %llu | %s (%s–%s) | %s | %s |\n", name,
                (unsigned long long)(std::string(name) == idle_tbb ? nodes_n : queues_n), fixed(h.median, 1).c_str(),
                fixed(h.min, 1).c_str(), fixed(h.max, 1).c_str(), fixed(r.median, 1).c_str(),
                fixed(c.median, 1).c_str());
  }
  std::printf("\nGrowth of malloc's bytes in use (mallinfo2 uordblks + hblkhd: chunk sizes, malloc's headers "
              "included) and of RSS from before the std::vector of handles is reserved to every queue made, per "
              "queue: the 8-byte handle (oneTBB: the unique_ptr) is included. Labels \"q0\" .. \"q%llu\". Memory "
              "TBB takes through its own allocator (tbbmalloc) would be in RSS only. ns to make one: the label's "
              "snprintf, the allocation and the first touch of heap pages (malloc_trim(0) before each run gives "
              "them back).\n\n",
              (unsigned long long)(queues_n - 1));

  // ---- ratios. Every figure comes from the rounds of run_interleaved: a ratio between two variants
  // is taken within each round, and its median over the rounds reported with its interval
  // (harness.hpp: estimate). Every <a>_throughput_vs_<b> is a's items per second over b's (> 1: a
  // faster); both did the same items, so in each round it is b's time over a's.
  const unsigned mt = main_threads;
  const std::string mts = std::to_string(mt);
  auto throughput_vs = [&](unsigned t, lock_kind k, lock_kind peer) {
    return paired(lock_result(k, t), lock_result(peer, t), [](double mine, double theirs) { return theirs / mine; });
  };
  // count / time (or time / count × scale) of one variant, round by round.
  auto per_round = [](const result& r, auto f) {
    std::vector<double> v;
    for (double x : r.samples) v.push_back(f(x));
    return median_with_interval(std::move(v));
  };
  auto rate = [&](const result& r, double items) { return per_round(r, [items](double x) { return items / x; }); };
  auto ns_each = [&](const result& r, double count) {
    return per_round(r, [count](double x) { return x * 1e9 / count; });
  };
  const lock_kind async = lock_kind::serialq_async;
  add_figure(report, "serialq_throughput_vs_mutex", throughput_vs(mt, async, best_mutex_way(mt)),
             "lock, " + mts + " producers: serial_queue q.async items/s over the better std::mutex's (" +
                 lock_name(best_mutex_way(mt)) + ", by median), per round (> 1: heddle faster)",
             at_least(1.0));
  add_figure(report, "serialq_throughput_vs_best_tbb", throughput_vs(mt, async, best_tbb_way(mt)),
             "lock, " + mts + " producers: q.async items/s over the fastest oneTBB way's in this run (" +
                 lock_name(best_tbb_way(mt)) + ", by median), per round (> 1: heddle faster)");
  add_ratio(report, "bytes_per_queue", memory.at(idle_labelled).heap_per().median,
            "heap bytes per idle serial_queue with a label \"q<i>\", its 8-byte handle included (median of the runs)",
            at_most(128));
  add_figure(report, "serialq_sync_throughput_vs_mutex", throughput_vs(mt, lock_kind::serialq_sync, best_mutex_way(mt)),
             "lock, " + mts + " producers: q.sync items/s over the better std::mutex's, per round");
  add_figure(report, "serialq_throughput_vs_mutex_threads", throughput_vs(mt, async, lock_kind::mutex_threads),
             "lock: q.async items/s over std::mutex's in std::threads, per round");
  add_figure(report, "serialq_throughput_vs_mutex_heddle_tasks", throughput_vs(mt, async, lock_kind::mutex_heddle),
             "lock: q.async items/s over std::mutex's in heddle tasks, per round");
  add_figure(report, "serialq_throughput_vs_tbb_spin_mutex", throughput_vs(mt, async, lock_kind::tbb_spin),
             "lock: q.async items/s over oneTBB spin_mutex's, per round");
  add_figure(report, "serialq_throughput_vs_tbb_queuing_mutex", throughput_vs(mt, async, lock_kind::tbb_queuing),
             "lock: q.async items/s over oneTBB queuing_mutex's, per round");
  add_figure(report, "serialq_throughput_vs_tbb_serial_node", throughput_vs(mt, async, lock_kind::tbb_node),
             "lock: q.async items/s over oneTBB function_node(1, queueing_lightweight)'s, per round");
  const double lock_items = double(lock_n);
  add_figure(report, "serialq_lock_items_per_s", rate(lock_result(async, mt), lock_items),
             "lock: critical sections per second through q.async, " + mts + " producers, per round");
  add_figure(report, "mutex_lock_items_per_s", rate(lock_result(best_mutex_way(mt), mt), lock_items),
             "lock: critical sections per second under the better std::mutex, " + mts + " producers, per round");
  add_figure(report, "best_tbb_lock_items_per_s", rate(lock_result(best_tbb_way(mt), mt), lock_items),
             "lock: critical sections per second under the fastest oneTBB way, " + mts + " producers, per round");
  nlohmann::json best_tbb_ways = nlohmann::json::object();
  for (unsigned t : threads) {
    const std::string ts = std::to_string(t);
    const std::string at = ", " + ts + (t == 1 ? " producer" : " producers") + ", per round";
    add_figure(report, "serialq_" + ts + "t_throughput_vs_mutex", throughput_vs(t, async, best_mutex_way(t)),
               "lock: q.async items/s over the better std::mutex's" + at);
    add_figure(report, "serialq_" + ts + "t_throughput_vs_best_tbb", throughput_vs(t, async, best_tbb_way(t)),
               std::string("lock: q.async items/s over the fastest oneTBB way's (") + lock_name(best_tbb_way(t)) + ")" +
                   at);
    add_figure(report, "serialq_" + ts + "t_throughput_vs_tbb_serial_node",
               throughput_vs(t, async, lock_kind::tbb_node),
               "lock: q.async items/s over oneTBB function_node(1, queueing_lightweight)'s" + at);
    add_figure(report, "serialq_sync_" + ts + "t_throughput_vs_mutex",
               throughput_vs(t, lock_kind::serialq_sync, best_mutex_way(t)),
               "lock: q.sync items/s over the better std::mutex's" + at);
    best_tbb_ways[ts] = lock_name(best_tbb_way(t));
  }
  auto through_result = [&](const char* name) -> const result& { return find(rs, name, mt, through_config); };
  const double through_items = double(through_n);
  add_figure(report, "serialq_items_per_s_1producer", rate(through_result(through_one), through_items),
             "throughput: items per second through one queue from one heddle task, " + mts + " workers, per round");
  add_figure(report, "serialq_items_per_s_all_producers", rate(through_result(through_all), through_items),
             "throughput: the same from a producer task per worker");
  add_figure(report, "serialq_items_per_s_outside", rate(through_result(through_outside), through_items),
             "throughput: the same from a thread outside the runtime");
  add_figure(report, "tbb_serial_node_items_per_s_1producer", rate(through_result(through_node_one), through_items),
             "throughput: oneTBB function_node(1, queueing_lightweight) from one oneTBB task, " + mts +
                 " threads, per round");
  add_figure(report, "serialq_1producer_throughput_vs_tbb_serial_node",
             paired(through_result(through_one), through_result(through_node_one),
                    [](double mine, double theirs) { return theirs / mine; }),
             "throughput from one producer: serial_queue items/s over function_node(1, queueing_lightweight)'s, per "
             "round (> 1: heddle faster)");
  auto group_result = [&](const char* name, unsigned t) -> const result& { return find(rs, name, t, group_config); };
  add_figure(report, "group_enter_leave_ns", ns_each(group_result(group_zero, 1), double(group_n)),
             "ns per enter()+leave() pair, one thread, the count back at zero after each pair, per round");
  add_figure(report, "group_enter_leave_above_zero_ns", ns_each(group_result(group_above, 1), double(group_n)),
             "ns per pair, one thread, the count kept above zero, per round");
  if (mt >= 2)
    add_figure(report, "group_enter_leave_contended_ns",
               ns_each(group_result(group_contended, mt), double(group_contended_n)),
               "ns per pair per thread, " + mts + " threads on one group, per round");
  add_ratio(report, "bytes_per_queue_unlabelled", memory.at(idle_unlabelled).heap_per().median,
            "heap bytes per idle serial_queue without a label, handle included (median of the runs)");
  add_ratio(report, "rss_bytes_per_queue", memory.at(idle_labelled).rss_per().median,
            "RSS bytes per idle serial_queue with a label \"q<i>\", handle included (median of the runs)");
  add_ratio(report, "tbb_function_node_bytes",
            std::max(memory.at(idle_tbb).heap_per().median, memory.at(idle_tbb).rss_per().median),
            "bytes per idle oneTBB function_node(serial, queueing_lightweight) (the larger of heap and RSS growth, "
            "medians of the runs), unique_ptr included");
  std::printf("\n");

  const nlohmann::json counts = print_counters(counters);

  nlohmann::json mem = nlohmann::json::object();
  for (auto& [name, m] : memory) {
    nlohmann::json samples = nlohmann::json::array();
    for (auto& r : m.runs)
      samples.push_back({{"n", r.n}, {"seconds", r.seconds}, {"heap_bytes", r.heap_bytes}, {"rss_bytes", r.rss_bytes}});
    mem[name] = {{"heap_bytes_per_queue", stat_json(m.heap_per())},
                 {"rss_bytes_per_queue", stat_json(m.rss_per())},
                 {"ns_to_make_one", stat_json(m.ns_per())},
                 {"samples", samples}};
  }
  add_suite(report, "dispatch", rs,
            {{"reps", opt.reps},
             {"lock_items", lock_n},
             {"throughput_items", through_n},
             {"group_pairs", group_n},
             {"group_pairs_per_thread_contended", group_contended_n},
             {"idle_queues", queues_n},
             {"idle_tbb_nodes", nodes_n},
             {"idle_memory", mem},
             {"best_tbb_way", best_tbb_ways},
             {"heddle_counters_per_run", counts}});
}

const registration reg{{"dispatch", 40,
                        "a serial queue as a lock against std::mutex, oneTBB mutexes and a serial function_node; "
                        "items through one queue; group enter/leave; bytes per idle queue",
                        &run}};

}  // namespace

}  // namespace heddle::bench::dispatch
