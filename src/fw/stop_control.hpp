// SPDX-License-Identifier: Apache-2.0
// The threaded processor's stop and its error, as CMSSW's event processor keeps its first exception:
// the first module_error of the job wins and is the job's (what run_threaded throws), and any error
// stops the job. Stopping drains what is in flight rather than abandoning it: the transition plan
// starts no event and begins no lumi or run, the module scheduler runs no module of the events in
// flight (their modules complete without running, so each event reaches its end), the lumis that
// began end once their events are done, then the run, then the job, whose end_job is told it failed.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "heddle/fw/errors.hpp"

namespace heddle::fw_detail {

// Thread-safe: fail() from any thread (modules, transitions, conditions), stopping() on every
// module's way (one relaxed load).
class stop_control {
 public:
  // Records `x` unless an error was recorded before (the first one wins), and stops the job.
  void fail(const module_error& x) {
    std::lock_guard lock(m_);
    if (!error_) error_ = x;
    stopping_.store(true, std::memory_order_relaxed);
  }

  // Whether the job stops: no new work; what is in flight drains. Relaxed: a module that reads
  // false just before another's failure runs, as it would have a moment earlier.
  bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }

  // Whether an error was recorded (end_job is told the job failed).
  bool failed() const {
    std::lock_guard lock(m_);
    return error_.has_value();
  }

  // The job's error, for its report (the processor throws it once its workers are gone); empty if
  // none. Leaves none behind.
  std::optional<module_error> take_error() {
    std::lock_guard lock(m_);
    return std::exchange(error_, std::nullopt);
  }

 private:
  mutable std::mutex m_;
  std::optional<module_error> error_;
  std::atomic<bool> stopping_{false};
};

}  // namespace heddle::fw_detail
