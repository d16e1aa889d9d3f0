// SPDX-License-Identifier: Apache-2.0
// A test plugin in another directory that registers the good plugin's producer name for a class of
// its own: the loader must refuse the name, naming both libraries, rather than pick one by order.
#include <heddle/fw/global.hpp>
#include <heddle/fw/registry.hpp>

#include "test_plugins.hpp"

namespace fw_test_plugins {

namespace {
[[maybe_unused]] const bool loaded = note_load("duplicate");
}

class ValuesProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit ValuesProducer(const heddle::fw::parameter_set&) : token_(produces<int>()) {}
  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(token_, static_cast<int>(e.id().event));
  }

 private:
  heddle::fw::put_token<int> token_;
};

}  // namespace fw_test_plugins

HEDDLE_FW_MODULE(fw_test_plugins::ValuesProducer);
