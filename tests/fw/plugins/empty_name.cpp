// SPDX-License-Identifier: Apache-2.0
// A test plugin whose registration is broken: a module type with an empty name (as a macro that
// builds the name wrongly would make). The registry keeps the problem, and the loader refuses the
// library, naming it, when it reads its directory.
#include <heddle/fw/global.hpp>
#include <heddle/fw/registry.hpp>

#include "test_plugins.hpp"

namespace fw_test_plugins {

namespace {
[[maybe_unused]] const bool loaded = note_load("empty_name");

class Nameless final : public heddle::fw::global::EDAnalyzer<> {
 public:
  explicit Nameless(const heddle::fw::parameter_set&) {}
  void analyze(const heddle::fw::event&, const heddle::fw::event_setup&) const override {}
};

const heddle::fw_detail::module_registration nameless("", &heddle::fw_detail::make_module<Nameless>);
}  // namespace

}  // namespace fw_test_plugins
