// SPDX-License-Identifier: Apache-2.0
// A program linked to the shared heddle loads a plugin with dlopen(), runs it on several workers,
// unloads it, and loads it again (-DBUILD_SHARED_LIBS=ON builds only). HEDDLE_TEST_PLUGIN is the
// plugin's path (tests/plugin/CMakeLists.txt).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "heddle/heddle.hpp"
#include "plugin_api.hpp"

namespace {

constexpr unsigned fib_n = 27;
constexpr std::uint64_t fib_27 = 196418;

// dlopen()s the plugin for as long as it lives; fails the test with dlerror()'s text otherwise.
class loaded_plugin {
 public:
  loaded_plugin() : h_(dlopen(HEDDLE_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL)) {}
  ~loaded_plugin() { close(); }
  loaded_plugin(const loaded_plugin&) = delete;
  loaded_plugin& operator=(const loaded_plugin&) = delete;

  bool ok() const { return h_ != nullptr; }
  plugin_run_fn run() const { return reinterpret_cast<plugin_run_fn>(dlsym(h_, "heddle_plugin_run")); }
  int close() { return h_ ? dlclose(std::exchange(h_, nullptr)) : 0; }

 private:
  void* h_;
};

bool plugin_is_loaded() {
  void* h = dlopen(HEDDLE_TEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  dlclose(h);
  return true;
}

void expect_good_report(const plugin_report& r) {
  EXPECT_EQ(r.fib, fib_27);
  EXPECT_GT(r.tasks, 100u);
  // Every task of the plugin saw the worker running it: the plugin and the library share the
  // calling-worker thread-local.
  EXPECT_EQ(r.outside_worker, 0u);
  // ... so its nested tasks went onto the workers' own deques, and only the root task came from
  // outside the runtime. (A plugin with its own copy of the thread-local would inject them all.)
  EXPECT_EQ(r.fib_injected, 1u);
  EXPECT_GE(r.fib_spawned, r.tasks / 4);
  // Several workers ran the plugin's tasks at the same time.
  EXPECT_EQ(r.met_workers, rendezvous_tasks);
  EXPECT_EQ(r.queue_items, 8000u);
  EXPECT_EQ(r.queue_misordered, 0u);
  EXPECT_EQ(r.queue_overlaps, 0u);
}

// A plugin is unloaded only once the runtimes that ran its tasks are gone: a worker may still be in
// the plugin's code (destroying a task record, whose type the plugin made) just after the last of
// the plugin's futures completed, and only a runtime's destructor waits for its workers. So each
// test loads the plugin before it makes its runtimes, which then end first.

TEST(plugin, runs_on_the_hosts_runtime_and_its_workers) {
  loaded_plugin p;
  ASSERT_TRUE(p.ok()) << dlerror();
  plugin_run_fn run = p.run();
  ASSERT_NE(run, nullptr) << dlerror();
  heddle::runtime rt(4);

  plugin_report r{};
  run(rt, fib_n, &r);
  expect_good_report(r);
}

TEST(plugin, unloads_and_loads_again) {
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    {
      loaded_plugin p;
      ASSERT_TRUE(p.ok()) << dlerror();
      plugin_run_fn run = p.run();
      ASSERT_NE(run, nullptr) << dlerror();
      plugin_report r{};
      {
        heddle::runtime rt(4);
        run(rt, fib_n, &r);
      }
      expect_good_report(r);
      EXPECT_EQ(p.close(), 0) << dlerror();
    }
    // Nothing of the plugin stays referenced: no thread-local with a destructor, no record of its
    // code left in heddle's libraries, so the loader really unmapped it.
    EXPECT_FALSE(plugin_is_loaded());
    // heddle keeps working after the plugin's code is gone.
    heddle::runtime after(2);
    EXPECT_EQ(after.task([] { return 42; }).get(), 42);
  }
}

TEST(plugin, two_runtimes_at_once) {
  loaded_plugin p;
  ASSERT_TRUE(p.ok()) << dlerror();
  plugin_run_fn run = p.run();
  ASSERT_NE(run, nullptr) << dlerror();
  heddle::runtime a(3), b(4);  // b: one worker drives the plugin on a, three meet in its rendezvous
  plugin_report ra{}, rb{};
  auto fa = b.task([&] { run(a, fib_n, &ra); });  // a worker of b drives the plugin on a
  run(b, fib_n, &rb);
  fa.get();
  expect_good_report(ra);
  expect_good_report(rb);
}

}  // namespace
