// SPDX-License-Identifier: Apache-2.0
// A plugin as a framework loads one: a shared object, dlopen()ed by a host, that uses heddle
// through the host's copy of the shared libraries. It spawns nested tasks, waits on their futures,
// runs a serial queue, and reports what it saw; the hosts (plugin_test.cpp, plugin_bare_host.cpp)
// check the report.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "heddle/heddle.hpp"
#include "plugin_api.hpp"

namespace {

struct fib_state {
  std::atomic<std::uint64_t> tasks{0};
  std::atomic<std::uint64_t> outside_worker{0};
};

// Below the cutoff, plain recursion: the tasks stay a few hundred, each long enough to be stolen.
std::uint64_t serial_fib(unsigned n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

std::uint64_t fib(fib_state& s, unsigned n) {
  s.tasks.fetch_add(1, std::memory_order_relaxed);
  // The calling worker as the plugin's code sees it: the library's thread-local, not a copy of
  // the plugin's own (heddle/core/export.hpp). A copy would read nullptr here.
  if (heddle::core_detail::current_worker == nullptr) s.outside_worker.fetch_add(1, std::memory_order_relaxed);
  if (n < 16) return serial_fib(n);
  auto left = heddle::task([&s, n] { return fib(s, n - 1); });
  const std::uint64_t right = fib(s, n - 2);
  return left.get() + right;
}

// A serial queue fed from several tasks at once; every item checks it runs alone and in order.
void run_queue(heddle::runtime& rt, plugin_report& out) {
  constexpr unsigned producers = 4;
  constexpr unsigned per_producer = 2000;
  heddle::serial_queue q(rt, "plugin");
  std::atomic<int> inside{0};
  std::atomic<std::uint64_t> overlaps{0}, misordered{0}, items{0};
  std::vector<unsigned> last(producers, 0);  // touched only by the queue's items
  heddle::task_group g(rt);
  for (unsigned p = 0; p < producers; ++p) {
    g.run([&, p] {
      for (unsigned i = 1; i <= per_producer; ++i) {
        q.async([&, p, i] {
          if (inside.fetch_add(1, std::memory_order_acq_rel) != 0) overlaps.fetch_add(1, std::memory_order_relaxed);
          if (last[p] + 1 != i) misordered.fetch_add(1, std::memory_order_relaxed);
          last[p] = i;
          items.fetch_add(1, std::memory_order_relaxed);
          inside.fetch_sub(1, std::memory_order_acq_rel);
        });
      }
    });
  }
  g.wait();
  q.sync([] {});  // every item has run and the plugin's code is off the queue before we return
  out.queue_items = items.load();
  out.queue_misordered = misordered.load();
  out.queue_overlaps = overlaps.load();
}

// rendezvous_tasks tasks that each wait (yielding, for at most 60 s) until all have started: they
// meet only if as many workers run them at the same time. Returns how many distinct threads met.
std::uint64_t rendezvous(heddle::runtime& rt) {
  std::atomic<unsigned> arrived{0};
  std::mutex m;
  std::set<std::thread::id> threads;
  heddle::task_group g(rt);
  for (unsigned i = 0; i < rendezvous_tasks; ++i) {
    g.run([&] {
      {
        std::lock_guard lock(m);
        threads.insert(std::this_thread::get_id());
      }
      arrived.fetch_add(1, std::memory_order_acq_rel);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (arrived.load(std::memory_order_acquire) < rendezvous_tasks && std::chrono::steady_clock::now() < give_up)
        std::this_thread::yield();
    });
  }
  g.wait();
  return arrived.load() == rendezvous_tasks ? threads.size() : 0;
}

void run_work(heddle::runtime& rt, unsigned n, plugin_report* out) {
  fib_state s;
  *out = plugin_report{};
  const heddle::runtime_stats before = rt.stats();
  out->fib = rt.task([&s, n] { return fib(s, n); }).get();
  const heddle::runtime_stats after = rt.stats();
  out->tasks = s.tasks.load();
  out->outside_worker = s.outside_worker.load();
  out->fib_spawned = after.spawned - before.spawned;
  out->fib_injected = after.injected - before.injected;
  out->met_workers = rendezvous(rt);
  run_queue(rt, *out);
}

}  // namespace

extern "C" [[gnu::visibility("default")]] void heddle_plugin_run(heddle::runtime& rt, unsigned n, plugin_report* out) {
  run_work(rt, n, out);
}

extern "C" [[gnu::visibility("default")]] void heddle_plugin_run_own(unsigned workers, unsigned n, plugin_report* out) {
  heddle::runtime rt(heddle::runtime_options{.threads = workers});
  run_work(rt, n, out);
}
