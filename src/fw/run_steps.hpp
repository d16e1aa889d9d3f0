// What both processors share around events: what a module's failure says, and the begin-run and
// end-run steps of every module.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "heddle/core/detail/clock.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "graph.hpp"
#include "heddle/fw/errors.hpp"

namespace heddle::fw::detail {

using heddle::core_detail::steady_now_ns;  // timeline entries' clock
using heddle::core_detail::exception_text;  // what a module's exception says, for its module_error

// The failure of a module whose acquire() let its handle go uncompleted.
inline std::exception_ptr dropped_handle() {
  return std::make_exception_ptr(std::logic_error("acquire dropped its handle without completing it"));
}

class run_steps {
 public:
  explicit run_steps(const graph& g) : g_(g) {}

  // Every module's begin_run / end_run, in declaration order. A throw becomes a module_error
  // naming the module and `event`, the run's first (begin) or next (end) event number.
  void begin(std::uint32_t run, std::uint64_t event) const { each(run, event, &module::begin_run); }
  void end(std::uint32_t run, std::uint64_t event) const { each(run, event, &module::end_run); }

 private:
  void each(std::uint32_t run, std::uint64_t event, void (module::*step)(std::uint32_t)) const {
    for (const node& n : g_.nodes) {
      try {
        (n.impl.get()->*step)(run);
      } catch (...) {
        throw module_error(n.decl.label, event, run,
                           (step == &module::begin_run ? "begin_run: " : "end_run: ") + exception_text(std::current_exception()));
      }
    }
  }
  const graph& g_;
};

}  // namespace heddle::fw::detail
