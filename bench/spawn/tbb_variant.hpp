// SPDX-License-Identifier: Apache-2.0
// The oneTBB task_group fib as a variant of an interleaved run: shared by the spawn and coroutines
// suites, which both time heddle's forms of fib against it.
#pragma once

#include <tbb/task_arena.h>

#include "fib.hpp"
#include "harness.hpp"

namespace heddle::bench::spawn {

inline variant tbb_fib_variant(const char* name, unsigned threads, tbb::task_arena& arena, int n, long expected) {
  return {name, threads, {}, [=, &arena] {
            return timed(
                [&] {
                  long v = 0;
                  arena.execute([&] { v = fib_tbb(n); });
                  return v;
                },
                expect_equal(expected, name));
          }};
}

}  // namespace heddle::bench::spawn
