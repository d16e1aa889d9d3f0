// SPDX-License-Identifier: Apache-2.0
// heddle::filter_mode and heddle::flow_control: how a pipeline's filter may be called, and how its
// first filter says that there are no more items (oneTBB's tbb::filter_mode, tbb::flow_control).
// See heddle/algorithm/parallel_pipeline.hpp.
#pragma once

namespace heddle {

namespace core_detail {
class pipeline_run;
}  // namespace core_detail

// How a filter's body may be called (oneTBB's tbb::filter_mode).
enum class filter_mode {
  parallel,             // on several items at once
  serial_in_order,      // one item at a time, in the order the first filter produced them
  serial_out_of_order,  // one item at a time, in any order
};

// Given to the first filter's body: calling stop() says there are no more items; what that call of
// the body returns is discarded.
class flow_control {
 public:
  void stop() noexcept { stopped_ = true; }

 private:
  friend class core_detail::pipeline_run;
  bool stopped_ = false;
};

}  // namespace heddle
