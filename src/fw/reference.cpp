// The single-threaded reference processor, the study's baseline: one event at a time, each path's
// filters in order, each producer run recursively where it is first asked for. No queues, no
// tasks, no atomics on the way: it is also the yardstick of the framework's overhead.
#include <atomic>
#include <chrono>
#include <exception>

#include "graph.hpp"
#include "heddle/fw/processor.hpp"
#include "run_steps.hpp"
#include "usage.hpp"

namespace heddle::fw {

namespace {

// Where an ExternalWork module's handle is completed: the reference waits for it right there.
class blocking_sink final : public detail::acquire_sink {
 public:
  void acquired(void*, std::uint32_t, std::exception_ptr error) noexcept override {
    error_ = std::move(error);
    done_.store(true, std::memory_order_release);
    done_.notify_one();
  }
  void dropped(void* e, std::uint32_t m) noexcept override {
    acquired(e, m, detail::dropped_handle());
  }
  heddle::detail::runtime_core* core() const noexcept override { return nullptr; }

  void arm() noexcept { done_.store(false, std::memory_order_relaxed); }
  std::exception_ptr wait() {
    done_.wait(false, std::memory_order_acquire);
    return std::move(error_);
  }

 private:
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

}  // namespace

run_report run_single_threaded(process& p, const run_options& o) {
  p.finalize();
  const detail::graph& g = p.graph();
  const std::uint32_t n = g.size();
  std::vector<std::int64_t> result(n);
  std::vector<std::uint8_t> ran(n);
  std::vector<std::uint8_t> passed(g.paths.size());
  blocking_sink sink;
  detail::run_steps runs(g);

  detail::usage_probe::reset_peak_rss();
  detail::usage_probe usage;
  run_report report;
  report.workers = 1;
  auto last_progress = std::chrono::steady_clock::now();

  for (std::uint64_t e = 0; e < o.events; ++e) {
    const std::uint32_t run = detail::run_of(e, o.events_per_run);
    if (report.runs.empty() || report.runs.back().run != run) {
      if (!report.runs.empty()) runs.end(report.runs.back().run, e);
      runs.begin(run, e);
      report.runs.push_back({run, 0, 0});
    }
    std::fill(ran.begin(), ran.end(), 0);

    auto execute = [&](std::uint32_t m) {
      const detail::node& node = g.nodes[m];
      const event_view view(e, run, result.data(), node.inputs);
      const std::int64_t start = o.record ? detail::steady_now_ns() : 0;
      try {
        if (node.impl->external_work()) {
          sink.arm();
          node.impl->acquire(view, async_handle(&sink, nullptr, m));
          if (std::exception_ptr error = sink.wait()) std::rethrow_exception(error);
        }
        result[m] = node.impl->produce(view);
      } catch (...) {
        throw module_error(node.decl.label, e, run, detail::describe(std::current_exception()));
      }
      ran[m] = 1;
      if (o.record) o.record->record({m, e, start, detail::steady_now_ns()});
    };
    // Inputs first, depth first: the producer runs where it is first needed.
    auto ensure = [&](auto& self, std::uint32_t m) -> void {
      if (ran[m]) return;
      for (std::uint32_t input : g.nodes[m].producers) self(self, input);
      execute(m);
    };

    for (std::size_t i = 0; i < g.paths.size(); ++i) {
      passed[i] = 1;
      for (std::uint32_t f : g.paths[i].members) {
        ensure(ensure, f);
        if (result[f] == 0) {
          passed[i] = 0;
          break;
        }
      }
    }
    for (std::uint32_t out : g.outputs)
      if (detail::selected(g.nodes[out], passed.data())) ensure(ensure, out);

    detail::event_checksum sum;
    for (std::uint32_t m = 0; m < n; ++m)
      if (ran[m]) sum.module(g.nodes[m], result[m]);
    for (std::size_t i = 0; i < g.paths.size(); ++i) sum.path(g.paths[i], passed[i] != 0);
    const std::uint64_t c = sum.finish(e);
    report.checksum += c;
    report.runs.back().checksum += c;
    ++report.runs.back().events;
    ++report.events;

    if (o.progress && std::chrono::steady_clock::now() - last_progress >= std::chrono::milliseconds(100)) {
      last_progress = std::chrono::steady_clock::now();
      o.progress(report.events);
    }
  }
  if (!report.runs.empty()) runs.end(report.runs.back().run, o.events);
  if (o.progress) o.progress(report.events);

  report.wall_s = usage.wall_s();
  report.cpu_s = usage.cpu_s();
  report.peak_rss_bytes = detail::usage_probe::peak_rss_bytes();
  report.os_threads = detail::usage_probe::os_threads();
  report.peak_in_flight = o.events ? 1 : 0;
  return report;
}

}  // namespace heddle::fw
