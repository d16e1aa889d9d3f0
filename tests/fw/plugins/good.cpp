// SPDX-License-Identifier: Apache-2.0
// The good test plugin: two module types of two kinds, a global producer of std::vector<double>
// and a one:: analyzer that reads it back (from the producer its parameter "src" names) and checks
// every value. The product type crosses the
// library boundary: the framework matches the analyzer's consumes<std::vector<double>> and the
// test program's own reader against this library's produces<std::vector<double>>.
#include <heddle/fw/global.hpp>
#include <heddle/fw/one.hpp>
#include <heddle/fw/parameter_set.hpp>
#include <heddle/fw/registry.hpp>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_plugins.hpp"

// A static variable of an inline function of default visibility, as the standard library has
// many: GCC binds it STB_GNU_UNIQUE unless -fno-gnu-unique (heddle_fw_add_plugin), and glibc then
// never unloads this library. fw_plugin_loader.LibrariesAreUnloadedWhenTheLoaderEnds thus checks
// that the flag works (hidden symbols are never unique: with only those, it would check nothing).
// Counts the events the checkers of this process checked.
// Formatted by hand: clang-format 14 misreads a namespace with an attribute.
// clang-format off
namespace fw_test_plugins_default_visibility __attribute__((visibility("default"))) {
inline std::atomic<unsigned long>& events_checked() {
  static std::atomic<unsigned long> count{0};
  return count;
}
}  // namespace fw_test_plugins_default_visibility
// clang-format on

namespace fw_test_plugins {

namespace {
[[maybe_unused]] const bool loaded = note_load("good");
}

class ValuesProducer final : public heddle::fw::global::EDProducer<> {
 public:
  explicit ValuesProducer(const heddle::fw::parameter_set&) : token_(produces<std::vector<double>>()) {}
  void produce(heddle::fw::event& e, const heddle::fw::event_setup&) const override {
    e.put(token_, values_for(e.id().event));
  }

 private:
  heddle::fw::put_token<std::vector<double>> token_;
};

// One event at a time (one::): counts what it checked without a lock.
class ValuesChecker final : public heddle::fw::one::EDAnalyzer<> {
 public:
  // "src": the producer's label.
  explicit ValuesChecker(const heddle::fw::parameter_set& ps)
      : token_(consumes<std::vector<double>>(ps.get<heddle::fw::input_tag>("src"))) {}
  void analyze(const heddle::fw::event& e, const heddle::fw::event_setup&) override {
    const std::vector<double>& got = e.get(token_);
    if (got != values_for(e.id().event))
      throw std::runtime_error("event " + std::to_string(e.id().event) + ": " + std::to_string(got.size()) +
                               " values, not those of values_for");
    ++checked_;
    fw_test_plugins_default_visibility::events_checked().fetch_add(1, std::memory_order_relaxed);
  }
  void end_job() override {
    if (checked_ == 0) throw std::runtime_error("no event was checked");
  }

 private:
  heddle::fw::get_token<std::vector<double>> token_;
  unsigned long checked_ = 0;
};

}  // namespace fw_test_plugins

HEDDLE_FW_MODULE(fw_test_plugins::ValuesProducer);
HEDDLE_FW_MODULE(fw_test_plugins::ValuesChecker);
