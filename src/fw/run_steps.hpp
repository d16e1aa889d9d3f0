// SPDX-License-Identifier: Apache-2.0
// What both processors share around events: what a module's failure says, and the job, run and
// luminosity-block transitions of every module.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "es_state.hpp"
#include "event_access.hpp"
#include "graph.hpp"
#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/detail/trace.hpp"
#include "heddle/fw/errors.hpp"
#include "lumi_state.hpp"
#include "module_access.hpp"
#include "trace_kinds.hpp"

namespace heddle::fw_detail {

using heddle::core_detail::steady_now_ns;   // timeline entries' clock
using heddle::core_detail::exception_text;  // what a module's exception says, for its module_error

// The failure of a module whose acquire() let its handle go uncompleted.
inline std::exception_ptr dropped_handle() {
  return std::make_exception_ptr(std::logic_error("acquire dropped its handle without completing it"));
}

// The transitions of every module, in declaration order (end_luminosity_block in end_lumi_order,
// end_run in end_run_order),
// every instance of a stream module. A throw becomes a module_error naming the module, the
// transition and `event` (the run's or lumi's first event number at its beginning, the next one at
// its end); the modules after it do not run that transition.
class run_steps {
 public:
  // `es`: the conditions run transitions read (made in place where not yet made).
  run_steps(const graph& g, es_state* es) : g_(g), es_(es) {}

  // begin_job, counting the modules whose begin_job returned (every instance of a stream module):
  // those, and only those, get end_job.
  void begin_job(std::uint64_t event) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "begin job");
    began_ = 0;
    each("begin_job", 0, event, [this](module_base& m, const event_setup&, std::uint32_t i) {
      m.begin_job();
      if (&m == g_.nodes[i].instances.back().get()) began_ = i + 1;
    });
  }
  // end_job of the modules that began, each told whether the job `failed` (module_base::job_failed).
  void end_job(std::uint64_t event, bool failed) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "end job");
    each("end_job", 0, event, [this, failed](module_base& m, const event_setup&, std::uint32_t i) {
      if (i >= began_) return;
      module_access::set_job_failed(m, failed);
      m.end_job();
    });
  }
  void begin(run_state& state, std::uint64_t event) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "begin run", state.number);
    each("begin_run", state.number, event, [&](module_base& m, const event_setup& s, std::uint32_t i) {
      m.begin_run(event_access::run_of(state, g_, i, false), s);
    });
  }
  void end(run_state& state, std::uint64_t event) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "end run", state.number);
    each(
        "end_run", state.number, event,
        [&](module_base& m, const event_setup& s, std::uint32_t i) {
          fw::run r = event_access::run_of(state, g_, i, true);
          m.end_run(r, s);
        },
        &g_.end_run_order);
  }
  void begin_lumi(lumi_state& lumi, std::uint64_t event) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "begin lumi", lumi.id.run, lumi.id.lumi);
    each(
        lumi_what("begin_luminosity_block", lumi).c_str(), lumi.id.run, event,
        [&](module_base& m, const event_setup& s, std::uint32_t i) {
          m.begin_luminosity_block(event_access::lumi(lumi, g_, i, false), s);
        },
        nullptr, lumi.id.lumi);
  }
  void end_lumi(lumi_state& lumi, std::uint64_t event) const {
    core_detail::trace::scoped_span traced(trace_kinds::transition, "end lumi", lumi.id.run, lumi.id.lumi);
    each(
        lumi_what("end_luminosity_block", lumi).c_str(), lumi.id.run, event,
        [&](module_base& m, const event_setup& s, std::uint32_t i) {
          luminosity_block l = event_access::lumi(lumi, g_, i, true);
          m.end_luminosity_block(l, s);
        },
        &g_.end_lumi_order, lumi.id.lumi);
  }

 private:
  static std::string lumi_what(const char* what, const lumi_state& lumi) {
    return std::string(what) + " (lumi " + std::to_string(lumi.id.lumi) + ")";
  }

  // step(instance, setup, module index) for every instance of every module; `order`: the modules
  // in the order to run them, null: in declaration order.
  // Conditions are those of (run, its first lumi) for run transitions, of the lumi for lumi ones.
  template <class Step>
  void each(const char* what, std::uint32_t run, std::uint64_t event, const Step& step,
            const std::vector<std::uint32_t>* order = nullptr, std::uint32_t lumi = 1) const {
    for (std::uint32_t k = 0; k < g_.size(); ++k) {
      const std::uint32_t i = order ? (*order)[k] : k;
      const node& n = g_.nodes[i];
      const event_setup setup = event_access::setup(g_, i, run ? es_ : nullptr, run, lumi);
      for (const auto& m : n.instances) {
        try {
          step(*m, setup, i);
        } catch (...) {
          throw module_error(n.spec.label, event, run,
                             std::string(what) + ": " + exception_text(std::current_exception()));
        }
      }
    }
  }
  const graph& g_;
  es_state* es_;
  mutable std::uint32_t began_ = 0;  // modules (in declaration order) whose begin_job returned
};

}  // namespace heddle::fw_detail
