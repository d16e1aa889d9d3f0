// SPDX-License-Identifier: Apache-2.0
// A host that does not link heddle: dlopen() of the plugin brings heddle's shared libraries in,
// their thread-locals included (heddle/core/export.hpp). Runs the plugin on a runtime the plugin
// makes, twice with an unload between, and exits non-zero with the reason on any failure.
//   plugin_bare_host <plugin.so>
#include <dlfcn.h>

#include <cstdio>

#include "plugin_api.hpp"

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "plugin_bare_host: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: plugin_bare_host <plugin.so>");
  for (int round = 0; round < 2; ++round) {
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) return fail(dlerror());
    auto run = reinterpret_cast<plugin_run_own_fn>(dlsym(h, "heddle_plugin_run_own"));
    if (!run) return fail(dlerror());
    plugin_report r{};
    run(3, 25, &r);
    std::printf("round %d: fib(25) = %llu from %llu tasks (%llu injected), %llu workers met, %llu queue items\n", round,
                static_cast<unsigned long long>(r.fib), static_cast<unsigned long long>(r.tasks),
                static_cast<unsigned long long>(r.fib_injected), static_cast<unsigned long long>(r.met_workers),
                static_cast<unsigned long long>(r.queue_items));
    if (r.fib != 75025) return fail("fib(25) is wrong");
    if (r.outside_worker != 0 || r.fib_injected != 1) return fail("a task of the plugin found no calling worker");
    if (r.met_workers != rendezvous_tasks) return fail("the plugin's tasks did not run on several workers at once");
    if (r.queue_items != 8000 || r.queue_misordered != 0 || r.queue_overlaps != 0)
      return fail("the serial queue lost, reordered or overlapped items");
    if (dlclose(h) != 0) return fail(dlerror());
  }
  std::puts("plugin_bare_host: ok");
  return 0;
}
