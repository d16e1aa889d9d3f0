// SPDX-License-Identifier: Apache-2.0
// The trace recorder: traces of known programs read back and counted exactly, their structure
// checked, overflow reported, bad use refused, concurrent recording (TSan and ASan runs).
#include <heddle/algorithm.hpp>
#include <heddle/core/trace.hpp>
#include <heddle/heddle.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "trace_reader.hpp"

namespace trace_test {
namespace {

namespace fs = std::filesystem;
using heddle_test::trace_file;

heddle::trace::options buffer_of(std::size_t bytes) {
  heddle::trace::options o;
  o.buffer_bytes = bytes;
  return o;
}

long fib(int n) {
  if (n < 2) return n;
  auto a = heddle::task(heddle::named("fib", fib), n - 1);
  const long b = fib(n - 2);
  return *a + b;
}

long fib_value(int n) {
  long a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

// Calls of fib with n >= 2, each of which spawns one task: F(n + 1) - 1.
long spawns_of_fib(int n) { return fib_value(n + 1) - 1; }

TEST(Trace, CountsTheTasksOfAKnownProgramExactly) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("fib.json");
  heddle::runtime rt({.threads = 2});
  const int n = heddle_test::scaled(18, 14);
  heddle::trace::start(path);
  const long r = rt.execute([&] { return *heddle::task(heddle::named("root", fib), n); });
  const heddle::trace::result res = heddle::trace::stop();
  EXPECT_EQ(r, fib_value(n));
  EXPECT_EQ(res.path, path);
  EXPECT_EQ(res.dropped, 0u);
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  EXPECT_EQ(t.count("X", "task", "fib"), static_cast<std::size_t>(spawns_of_fib(n)));
  EXPECT_EQ(t.count("X", "task", "root"), 1u);
  EXPECT_EQ(t.count("X", "task", "task"), 0u) << "every task of this program is named";
  EXPECT_EQ(t.doc.at("otherData").at("dropped"), 0);
  EXPECT_EQ(t.doc.at("otherData").at("heddle_trace_version"), 1);
  // Tasks ran on the runtime's workers only; a stolen one names another worker than its own.
  for (auto& e : t.select("X", "task")) {
    const std::string thread = t.thread_of(e);
    ASSERT_TRUE(thread == "worker 0" || thread == "worker 1") << thread;
    if (e.at("args").contains("stolen_from")) {
      EXPECT_NE("worker " + std::to_string(e.at("args").at("stolen_from").get<int>()), thread);
    }
    const std::string how = e.at("args").at("how");
    EXPECT_TRUE(how == "loop" || how == "nested" || how == "inline") << how;
  }
  fs::remove(path);
}

TEST(Trace, LabelsTaskGroupsAndAlgorithmsAndRecordsTheirWaits) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("group.json");
  heddle::runtime rt({.threads = 2});
  constexpr int members = 64;
  std::atomic<int> ran{0};
  heddle::trace::start(path);
  rt.execute([&] {
    heddle::task_group g;
    for (int i = 0; i < members; ++i)
      g.run(heddle::named("member", [&] {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        ran.fetch_add(1);
      }));
    g.wait();
    heddle::parallel_for(heddle::blocked_range<int>(0, 1000, 10),
                         heddle::named("chunk", [](const heddle::blocked_range<int>&) {}),
                         heddle::simple_partitioner{});
  });
  const heddle::trace::result res = heddle::trace::stop();
  EXPECT_EQ(ran.load(), members);
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  EXPECT_EQ(t.count("X", "task", "member"), static_cast<std::size_t>(members));
  // A simple partitioner splits down to the grain: at least 100 tasks, each of them ran the body.
  EXPECT_GE(t.count("X", "task", "chunk"), 100u);
  // execute() runs its body on the calling thread, which is no worker: it blocks on the group.
  bool waited_for_group = false;
  for (auto& e : t.events)
    if (e.at("ph") == "X" && (e.at("name") == "wait" || e.at("name") == "block") && e.contains("args") &&
        e.at("args").value("on", "") == "group")
      waited_for_group = true;
  EXPECT_TRUE(waited_for_group) << "64 tasks of 50 µs on 2 workers: the waiter must have waited";
  EXPECT_EQ(res.dropped, 0u);
  fs::remove(path);
}

TEST(Trace, NamedCallsAsTheCallableWouldBeCalled) {
  struct matrix {
    int row_sum(int i) const { return 10 * i; }
  } m;
  auto f = heddle::named("row", &matrix::row_sum);
  EXPECT_EQ(f(&m, 4), 40);
  EXPECT_STREQ(f.label(), "row");
  EXPECT_EQ(*heddle::task(heddle::named("row", &matrix::row_sum), &m, 3), 30);
  auto thrower = heddle::named("thrower", [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(thrower(), std::runtime_error);
}

TEST(Trace, UserSpansInstantsThreadNamesAndInternedLabels) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("user.json");
  const std::string made_at_run_time = std::string("module ") + std::to_string(42);
  const char* label = heddle::trace::intern(made_at_run_time);
  EXPECT_EQ(label, heddle::trace::intern("module 42")) << "one copy per text";
  heddle::trace::start(path);
  std::thread other([&] {
    heddle::trace::set_thread_name("reader");
    heddle::trace::span outer("outer");
    { heddle::trace::span inner(label); }
    heddle::trace::instant("mark");
  });
  other.join();
  heddle::trace::stop();
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  ASSERT_EQ(t.count("X", "user", "outer"), 1u);
  ASSERT_EQ(t.count("X", "user", "module 42"), 1u);
  ASSERT_EQ(t.count("i", "user", "mark"), 1u);
  EXPECT_EQ(t.thread_of(t.select("X", "user", "outer")[0]), "reader");
  const auto outer = t.select("X", "user", "outer")[0], inner = t.select("X", "user", "module 42")[0];
  EXPECT_LE(heddle_test::trace_ns(outer["ts"]), heddle_test::trace_ns(inner["ts"]));
  fs::remove(path);
}

TEST(Trace, AFullBufferDropsRecordsCountsThemAndNeverBlocks) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("overflow.json");
  heddle::trace::start(path, buffer_of(40 * 100));
  for (int i = 0; i < 1000; ++i) heddle::trace::instant("tick");
  const heddle::trace::result res = heddle::trace::stop();
  EXPECT_EQ(res.records, 100u);
  EXPECT_EQ(res.dropped, 900u);
  trace_file t(path);
  EXPECT_EQ(t.count("i", "user", "tick"), 100u);
  EXPECT_EQ(t.doc.at("otherData").at("dropped"), 900);
  ASSERT_EQ(t.count("i", "trace", "records dropped"), 1u);
  EXPECT_EQ(t.select("i", "trace", "records dropped")[0].at("args").at("dropped"), 900);
  heddle_test::expect_well_formed(t);
  fs::remove(path);
}

TEST(Trace, BadUseIsRefusedWithItsReason) {
  if (!heddle::trace::compiled_in()) {
    EXPECT_THROW(heddle::trace::start(heddle_test::trace_path("off.json")), heddle::trace::trace_error);
    return;
  }
  try {
    heddle::trace::stop();
    ADD_FAILURE() << "stop without a session";
  } catch (const heddle::trace::trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("no trace is being recorded"), std::string::npos) << e.what();
  }
  try {
    heddle::trace::start("/nonexistent-dir/x/trace.json");
    ADD_FAILURE() << "a file in a missing folder";
  } catch (const heddle::trace::trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x/trace.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(heddle::trace::start(heddle_test::trace_path("tiny.json"), buffer_of(100)), heddle::trace::trace_error);
  const std::string path = heddle_test::trace_path("twice.json");
  heddle::trace::start(path);
  try {
    heddle::trace::start(heddle_test::trace_path("second.json"));
    ADD_FAILURE() << "a second session";
  } catch (const heddle::trace::trace_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << "names the file being recorded: " << e.what();
  }
  EXPECT_TRUE(heddle::trace::active());
  heddle::trace::stop();
  EXPECT_FALSE(heddle::trace::active());
  fs::remove(path);
  fs::remove(heddle_test::trace_path("tiny.json"));
}

// Threads record while sessions start and stop under them: every file is well formed, no record is
// counted twice, and each thread's records in a session it wholly recorded in are all there.
TEST(Trace, ThreadsRecordWhileSessionsStartAndStop) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  heddle_test::watchdog dog("trace start/stop stress", std::chrono::seconds(300));
  heddle::runtime rt({.threads = 2});
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([&] {
      while (!done.load()) {
        heddle::trace::span s("outside");
        heddle::trace::instant("tick");
      }
    });
  const int sessions = heddle_test::scaled(20, 6);
  for (int i = 0; i < sessions; ++i) {
    const std::string path = heddle_test::trace_path("stress" + std::to_string(i) + ".json");
    heddle::trace::start(path, buffer_of(40 * 4096));
    const long r = rt.execute([] { return *heddle::task(heddle::named("fib", fib), 12); });
    EXPECT_EQ(r, 144);
    const heddle::trace::result res = heddle::trace::stop();
    trace_file t(path);
    heddle_test::expect_well_formed(t);
    EXPECT_EQ(t.count("X", "task", "fib"), static_cast<std::size_t>(spawns_of_fib(12) + 1)) << "session " << i;
    EXPECT_EQ(t.doc.at("otherData").at("records").get<std::uint64_t>(), res.records);
    fs::remove(path);
  }
  done.store(true);
  for (auto& th : threads) th.join();
}

TEST(Trace, HeddleTraceInTheEnvironmentRecordsTheWholeProgram) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("env.json");
  const std::string cmd = "HEDDLE_TRACE=" + path + " " + HEDDLE_TRACE_PROGRAM + " 15";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  trace_file t(path);
  heddle_test::expect_well_formed(t);
  EXPECT_EQ(t.count("X", "task", "fib"), static_cast<std::size_t>(spawns_of_fib(15)));
  fs::remove(path);
  // Bad values: a message naming the variable, exit status 2, before the program runs.
  const std::string bad_buffer = "HEDDLE_TRACE=" + path + " HEDDLE_TRACE_BUFFER=lots " + HEDDLE_TRACE_PROGRAM +
                                 " 5 2>&1";
  std::string out;
  FILE* p = popen(bad_buffer.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("HEDDLE_TRACE_BUFFER='lots'"), std::string::npos) << out;
  const std::string bad_path = std::string("HEDDLE_TRACE=/nonexistent-dir/t.json ") + HEDDLE_TRACE_PROGRAM +
                               " 5 2>/dev/null";
  EXPECT_EQ(WEXITSTATUS(std::system(bad_path.c_str())), 2);
}

// A layer's kinds and its run of several processes, through the core's extension points alone:
// the kinds' events on their keyed lanes, a kept flow end, a kind nobody installed said so; the
// process named and numbered as node 3, its file moved to its own after the session started (FILE
// gone), and the exit hook run.
TEST(Trace, ALayerInstallsItsKindsAndJoinsARunOfSeveralProcesses) {
  if (!heddle::trace::compiled_in()) GTEST_SKIP() << "built with -DHEDDLE_TRACE=OFF";
  const std::string path = heddle_test::trace_path("extension.json");
  const std::string cmd = "HEDDLE_TRACE=" + path + " " + HEDDLE_TRACE_EXTENSION_PROGRAM;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_FALSE(fs::exists(path)) << "the file the session began with stayed";
  trace_file t(path + ".member.json");
  heddle_test::expect_well_formed(t);
  const auto& process = t.doc.at("otherData").at("processes").at(0);
  EXPECT_EQ(process.at("node").get<long>(), 3);
  const std::string name = process.at("name").get<std::string>();
  EXPECT_TRUE(name.size() > 7 && name.substr(name.size() - 7) == " node 3") << name;
  const std::vector<std::pair<std::string, std::string>> expected{
      {"one", "key 7"}, {"two", "key 7 2"}, {"three", "key 9"}};
  for (const auto& [span, track] : expected) {
    const auto spans = t.select("X", "test", span);
    ASSERT_EQ(spans.size(), 1u) << span;
    EXPECT_EQ(t.thread_of(spans[0]), track) << span;
  }
  const auto kept = t.select("s", "flow", "test");
  ASSERT_EQ(kept.size(), 1u) << "an unpaired flow end of a kind that keeps it";
  EXPECT_EQ(kept[0].at("id").get<std::uint64_t>(), (std::uint64_t{1} << 52) | 5);
  EXPECT_EQ(t.count("i", "trace", "unknown kind"), 1u);
  std::ifstream after(path + ".after");
  std::string base;
  std::getline(after, base);
  EXPECT_EQ(base, path) << "the exit hook did not run with FILE";
  fs::remove(path + ".member.json");
  fs::remove(path + ".after");
}

}  // namespace

}  // namespace trace_test
