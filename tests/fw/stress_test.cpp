// Random processes, many events in flight: the threaded processor's checksum equals the reference's
// for every graph, every mix of thread types and waits, with runs and rejecting filters.
#include <gtest/gtest.h>

#include <heddle/fw.hpp>
#include <random>
#include <sstream>

#include "fw_test_support.hpp"

namespace {

using namespace heddle::fw;

// A random configuration: `n` producers in a DAG (each gets up to 4 earlier ones), filters with
// decision patterns, output modules selecting paths.
std::string random_config(std::mt19937& rng, int n) {
  auto pick = [&](int k) { return std::uniform_int_distribution<int>(0, k - 1)(rng); };
  const char* threads[] = {"ThreadSafeBetweenInstances", "ThreadSafeBetweenInstances", "ThreadSafeBetweenModules", "ThreadUnsafe"};
  const char* timed[] = {"EventTimesBusyWaitProducer", "EventTimesSleepingProducer"};
  std::ostringstream s;
  s << R"({"process":{"options":{"nSimultaneousEvents":4,"busyWaitScaleFactor":2e7},"source":{"iterations":40,"eventsPerRun":7},"producers":[)";
  for (int i = 0; i < n; ++i) {
    s << (i ? "," : "") << R"({"@label":"p)" << i << R"(","threadType":")" << threads[pick(4)] << '"';
    switch (pick(4)) {
      case 0: s << R"(,"@type":"FastProducer")"; break;
      case 1: s << R"(,"@type":"ThreadSafeProducer","value":)" << pick(1000); break;
      case 2: s << R"(,"@type":"SleepingWithAcquireProducer","averageTime":2e-5,"minTime":0,"maxTime":4e-5)"; break;
      default: s << R"(,"@type":")" << timed[pick(2)] << R"(","eventTimes":[1e-5,0,3e-5])"; break;
    }
    s << R"(,"toGet":[)";
    for (int k = 0, m = i ? pick(5) : 0; k < m; ++k) s << (k ? "," : "") << R"({"label":"p)" << pick(i) << R"(","product":""})";
    s << "]}";
  }
  s << R"(],"filters":[)";
  for (int f = 0; f < 6; ++f) {
    s << (f ? "," : "") << R"({"@label":"f)" << f << R"(","@type":"PassFilter","threadType":")" << threads[pick(4)]
      << R"(","pass":[true,)" << (pick(2) ? "false" : "true") << R"(,true],"toGet":[{"label":"p)" << pick(n) << R"(","product":""}]})";
  }
  s << R"(],"outputs":[{"@label":"out","@type":"OutputModule","threadType":"ThreadUnsafe","selectEvents":["a"],"toGet":[{"label":"p)"
    << pick(n) << R"(","product":""}]},{"@label":"all","@type":"OutputModule","toGet":[{"label":"p)" << pick(n)
    << R"(","product":""}]}],)";
  s << R"("paths":{"a":["f0","f1","f2"],"b":["f3","f1"],"c":["f4","f5"]},"endPaths":{"e":["out","all"]}}})";
  return s.str();
}

TEST(FrameworkStress, RandomProcessesGiveTheReferenceChecksum) {
  heddle_test::watchdog dog("framework stress", std::chrono::seconds(600));
  std::mt19937 rng(20261123);
  const int graphs = heddle_test::scaled(12, 4);
  for (int g = 0; g < graphs; ++g) {
    const std::string text = random_config(rng, 12 + g * 4);
    const process_config c = parse_config(text, "random-" + std::to_string(g));
    std::uint64_t reference = 0;
    {
      process p = make_process(c, timing_options{wait_mode::as_configured, 1, 0});
      run_options o = fw_test::options(c.events, 1);
      o.events_per_run = c.events_per_run;
      reference = run_single_threaded(p, o).checksum;
    }
    for (wait_mode wait : {wait_mode::as_configured, wait_mode::timer, wait_mode::busy})
      for (std::uint64_t in_flight : {1u, 3u, 40u}) {
        process p = make_process(c, timing_options{wait, 1, 0});
        run_options o = fw_test::options(c.events, in_flight, 1 + unsigned(g % 3));
        o.events_per_run = c.events_per_run;
        const run_report r = run_threaded(p, o);
        EXPECT_EQ(r.events, c.events);
        EXPECT_EQ(r.runs.size(), 6u);
        EXPECT_EQ(r.checksum, reference) << "graph " << g << ", wait " << to_string(wait) << ", in flight " << in_flight;
      }
  }
}

}  // namespace
