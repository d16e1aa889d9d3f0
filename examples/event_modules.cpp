// SPDX-License-Identifier: Apache-2.0
// Events through modules that each own a serial queue, the way an event-processing framework built
// on queues runs them: a module sees one event at a time (its state needs no lock), different
// modules work on different events at once, a group says when every event is through, and a
// timer source reports progress without a thread waiting for it.
#include <heddle/heddle.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

// A module with state that only its queue touches.
struct module {
  explicit module(const char* name) : queue(name) {}
  heddle::serial_queue queue;
  double sum = 0;   // touched only by items of `queue`
  long events = 0;  // likewise

  void process(int event) {
    double x = 0;
    for (int i = 1; i < 2000; ++i) x += std::sin(event * 0.001 + i);  // a little work per event
    sum += x;
    ++events;
  }
};

}  // namespace

int main() {
  using namespace std::chrono_literals;
  heddle::runtime rt;
  const int n_events = 20000;

  // The queues are made from a worker of `rt`, so they belong to it.
  return rt
      .task([&] {
        module tracker("tracker"), calorimeter("calorimeter"), muons("muons");
        heddle::serial_queue output("output");
        std::atomic<long> done{0};
        heddle::group all;

        auto progress = heddle::source::timer(20ms, output, [&](std::uint64_t) {
          std::printf("  %ld of %d events through all modules\n", done.load(), n_events);
        });

        for (int e = 0; e < n_events; ++e) {
          // The tracker first; then the calorimeter and the muons, both at once, on what it produced.
          all.async(tracker.queue, [&, e] {
            tracker.process(e);
            all.async(calorimeter.queue, [&, e] {
              calorimeter.process(e);
              done.fetch_add(1, std::memory_order_relaxed);
            });
            all.async(muons.queue, [&, e] { muons.process(e); });
          });
        }

        all.wait();  // runs items meanwhile: this worker helps
        progress.cancel().get();
        output.sync([] {});  // the last progress line is out
        std::printf("tracker %ld, calorimeter %ld, muons %ld events; sums %.3f %.3f %.3f\n", tracker.events,
                    calorimeter.events, muons.events, tracker.sum, calorimeter.sum, muons.sum);
        return tracker.events == n_events && calorimeter.events == n_events && muons.events == n_events ? 0 : 1;
      })
      .get();
}
