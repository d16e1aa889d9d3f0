// SPDX-License-Identifier: Apache-2.0
// Errors of the event-processing framework. Two kinds, because they end a job differently:
// a configuration that cannot run (heddle-fw exits 2 before any event starts), and a module that
// failed while events were in flight (the run stops cleanly, exit 1). Their calls are const:
// thread-safe.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heddle/core/export.hpp"

namespace heddle::fw {

// A configuration that cannot run: malformed JSON, a missing or unknown key, an unknown module
// type or label, a dependency cycle, a negative time. what() is one line that says where
// ("FILE:LINE:COL: ..." for syntax, "FILE: process.producers[3] 'label': ..." for the rest).
class HEDDLE_EXPORT config_error : public std::runtime_error {
 public:
  ~config_error() override;
  using std::runtime_error::runtime_error;
};

// A module threw while processing an event. what() names the module, the event and the run.
class HEDDLE_EXPORT module_error : public std::runtime_error {
 public:
  ~module_error() override;
  module_error(std::string label, std::uint64_t event, std::uint32_t run, const std::string& message)
      : std::runtime_error("module '" + label + "' failed on event " + std::to_string(event) + " (run " +
                           std::to_string(run) + "): " + message),
        label_(std::move(label)),
        event_(event),
        run_(run) {}

  const std::string& label() const noexcept { return label_; }
  std::uint64_t event() const noexcept { return event_; }
  std::uint32_t run() const noexcept { return run_; }

 private:
  std::string label_;
  std::uint64_t event_;
  std::uint32_t run_;
};

// A product used against its declaration while an event runs: read but not made by its producer,
// or written twice by its module. what() names the product (type and tag), the modules and the
// event. Thrown by event::get / emplace / put inside a module; the framework then fails the module
// (module_error) with this text.
class HEDDLE_EXPORT product_error : public std::logic_error {
 public:
  ~product_error() override;
  using std::logic_error::logic_error;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::config_error;
using fw::module_error;
using fw::product_error;
}  // namespace heddle::fw_detail
