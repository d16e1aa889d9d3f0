// What both processors share around events: what a module's failure says, and the begin-run and
// end-run steps of every module.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "es_state.hpp"
#include "event_access.hpp"
#include "graph.hpp"
#include "heddle/fw/errors.hpp"

namespace heddle::fw::detail {

using heddle::core_detail::steady_now_ns;  // timeline entries' clock
using heddle::core_detail::exception_text;  // what a module's exception says, for its module_error

// The failure of a module whose acquire() let its handle go uncompleted.
inline std::exception_ptr dropped_handle() {
  return std::make_exception_ptr(std::logic_error("acquire dropped its handle without completing it"));
}

// The transitions of every module, in declaration order, every instance of a stream module. A
// throw becomes a module_error naming the module, the transition and `event` (the run's first
// event number at its beginning, the next one at its end).
class run_steps {
 public:
  // `es`: the conditions run transitions read (made in place where not yet made).
  run_steps(const graph& g, es_state* es) : g_(g), es_(es) {}

  void begin_job(std::uint64_t event) const {
    each("begin_job", 0, event, [](module_base& m, const event_setup&) { m.begin_job(); });
  }
  void end_job(std::uint64_t event) const {
    each("end_job", 0, event, [](module_base& m, const event_setup&) { m.end_job(); });
  }
  void begin(std::uint32_t number, std::uint64_t event) const {
    each("begin_run", number, event, [r = run(number)](module_base& m, const event_setup& s) { m.begin_run(r, s); });
  }
  void end(std::uint32_t number, std::uint64_t event) const {
    each("end_run", number, event, [r = run(number)](module_base& m, const event_setup& s) { m.end_run(r, s); });
  }

 private:
  template <class Step>
  void each(const char* what, std::uint32_t run, std::uint64_t event, const Step& step) const {
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      const node& n = g_.nodes[i];
      const event_setup setup = event_access::setup(g_, i, run ? es_ : nullptr, run, 1);
      for (const auto& m : n.instances) {
        try {
          step(*m, setup);
        } catch (...) {
          throw module_error(n.spec.label, event, run, std::string(what) + ": " + exception_text(std::current_exception()));
        }
      }
    }
  }
  const graph& g_;
  es_state* es_;
};

}  // namespace heddle::fw::detail
