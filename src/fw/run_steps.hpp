// What both processors share around events: the begin-run and end-run steps of every module, and
// whether an output module writes an event.
#pragma once

#include <exception>

#include "heddle/fw/detail/graph.hpp"
#include "heddle/fw/errors.hpp"

namespace heddle::fw::detail {

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
      } catch (const std::exception& x) {
        throw module_error(n.decl.label, event, run, std::string(step == &module::begin_run ? "begin_run: " : "end_run: ") + x.what());
      } catch (...) {
        throw module_error(n.decl.label, event, run, "an exception not derived from std::exception");
      }
    }
  }
  const graph& g_;
};

// An output module writes an event when it selects no path, or when one it selects passed.
inline bool selected(const node& out, const std::uint8_t* passed) noexcept {
  if (out.select_paths.empty()) return true;
  for (std::uint32_t p : out.select_paths)
    if (passed[p]) return true;
  return false;
}

}  // namespace heddle::fw::detail
