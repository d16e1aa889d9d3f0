// SPDX-License-Identifier: Apache-2.0
// A test plugin that cannot be loaded: its module calls a function no library defines, so dlopen
// (RTLD_NOW) fails; the loader reports the library and the dynamic loader's reason.
#include <heddle/fw/global.hpp>
#include <heddle/fw/registry.hpp>

#include <stdexcept>

extern "C" int heddle_fw_test_function_nobody_defines();

namespace fw_test_plugins {

class Unresolved final : public heddle::fw::global::EDAnalyzer<> {
 public:
  explicit Unresolved(const heddle::fw::parameter_set&) {}
  void analyze(const heddle::fw::event&, const heddle::fw::event_setup&) const override {
    if (heddle_fw_test_function_nobody_defines() != 0) throw std::runtime_error("unreachable");
  }
};

}  // namespace fw_test_plugins

HEDDLE_FW_MODULE(fw_test_plugins::Unresolved);
