// The framework from an installed heddle: two C++ modules on a path, run multi-threaded and with
// the single-threaded reference processor; the checksums must agree.
#include <heddle/fw.hpp>

#include <cstdio>
#include <memory>

namespace {
struct count final : heddle::fw::module {
  std::int64_t produce(const heddle::fw::event_view& e) override { return std::int64_t(e.number()) + 1; }
};
struct positive final : heddle::fw::module {
  std::int64_t produce(const heddle::fw::event_view& e) override { return e.input(0) > 0; }
};

heddle::fw::process make() {
  heddle::fw::process p("consumer");
  p.add_module({.label = "count"}, std::make_unique<count>());
  p.add_module({.label = "positive", .role = heddle::fw::module_role::filter, .inputs = {{"count", ""}}},
               std::make_unique<positive>());
  p.add_path("p", {"positive"});
  return p;
}
}  // namespace

int main() {
  heddle::fw::run_options o{.threads = 2, .events_in_flight = 8, .events = 1000};
  heddle::fw::process a = make(), b = make();
  const auto threaded = heddle::fw::run_threaded(a, o);
  const auto single = heddle::fw::run_single_threaded(b, o);
  if (threaded.events != 1000 || threaded.checksum != single.checksum) {
    std::fprintf(stderr, "consumer: framework checksums differ\n");
    return 1;
  }
  std::puts("consumer: framework checks passed");
  return 0;
}
