// SPDX-License-Identifier: Apache-2.0
// The blocking workload on heddle. Compute chains are continuations (task(c0).then(c1)...); a light
// task starts its successor after its own work: at once (noblock), as a task that sleeps on the
// clock (blocking), or as heddle::sleep_until(rt, start + delay).then(strategy, successor) (timer).
#include <heddle/heddle.hpp>

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runs.hpp"

namespace heddle::bench::blocking {

namespace {

struct context {
  run_record& r;
  heddle::runtime* rt;
  heddle_mode mode;
  heddle::strategy how;
  // The futures of the timer successors, so that a timer that fails (its successor is then
  // skipped and the chain stops) is reported with its error rather than as a hang.
  std::mutex m;
  std::vector<heddle::future<void>> successors;
};

std::string what(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

void light_step(context* x, unsigned c, unsigned i) noexcept {
  try {
    const clock::time_point next_at = x->r.light(c, i);
    if (i + 1 == x->r.p().comm_length) return;
    switch (x->mode) {
      case heddle_mode::noblock: (void)heddle::task([x, c, i] { light_step(x, c, i + 1); }); break;
      case heddle_mode::blocking:
        (void)heddle::task([x, c, i, next_at] {
          std::this_thread::sleep_until(next_at);
          light_step(x, c, i + 1);
        });
        break;
      case heddle_mode::timer: {
        auto next = heddle::sleep_until(*x->rt, next_at).then(x->how, [x, c, i] { light_step(x, c, i + 1); });
        std::lock_guard lock(x->m);
        x->successors.push_back(std::move(next));
        break;
      }
    }
  } catch (...) {
    x->r.fail("light task " + std::to_string(i) + " of chain " + std::to_string(c) +
              " could not start its successor: " + what(std::current_exception()));
    x->r.abandon_chain();
  }
}

// The error of the first successor future that failed, or "".
std::string first_error(context& x) {
  std::lock_guard lock(x.m);
  for (auto& f : x.successors)
    if (f.is_ready()) try {
        f.get();
      } catch (...) {
        return what(std::current_exception());
      }
  return {};
}

}  // namespace

heddle_outcome run_heddle(const params& p, run_record& r, heddle_mode mode, heddle::strategy how,
                          clock::duration timeout) {
  heddle_outcome out;
  // Made before the runtime, so that it outlives the workers even when a hung run throws.
  context x{r, nullptr, mode, how, {}, {}};
  heddle::runtime rt(heddle::runtime_options{.threads = p.threads});
  x.rt = &rt;
  const auto t0 = clock::now();
  // The root task builds the chains inside the runtime (continuations belong to the runtime of the
  // thread that makes them); the calling thread waits outside, as a program's main does.
  // The first light task of each chain runs right away, in the root, so that every later delay
  // (a worker held by a sleep, a successor queued behind compute tasks) shows in the latencies.
  auto root = rt.task([&x, &p] {
    for (unsigned c = 0; c < p.comm_chains; ++c) light_step(&x, c, 0);
    for (unsigned c = 0; c < p.compute_chains; ++c) {
      auto f = heddle::task([&x, c] { x.r.compute(c, 0); });
      for (unsigned k = 1; k < p.compute_length; ++k) f = std::move(f).then([&x, c, k] { x.r.compute(c, k); });
    }
  });
  const bool finished = r.wait(timeout);
  const auto t1 = clock::now();
  root.get();
  if (!finished) {
    const std::string err = first_error(x);
    throw std::runtime_error("heddle " + std::string(mode == heddle_mode::timer ? heddle::to_string(how) : "") + ": " +
                             std::to_string(r.chains_left()) + " chains had not finished after " +
                             std::to_string(std::chrono::duration<double>(timeout).count()) + " s" +
                             (err.empty() ? std::string(" (no timer successor failed)")
                                          : "; a timer successor failed: " + err));
  }
  {
    // Every chain has finished; each successor future is done or about to be (its task is returning).
    std::lock_guard lock(x.m);
    for (auto& f : x.successors) {
      try {
        f.get();
      } catch (...) {
        r.fail(std::string("a timer successor failed: ") + what(std::current_exception()));
      }
    }
    x.successors.clear();
  }
  if (mode == heddle_mode::timer) {
    const heddle::runtime_stats st = rt.stats();
    out.engine = st.latency(how);
    out.lateness = st.timer_lateness;
  }
  out.seconds = std::chrono::duration<double>(t1 - t0).count();
  return out;
}

}  // namespace heddle::bench::blocking
