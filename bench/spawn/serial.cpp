// SPDX-License-Identifier: Apache-2.0
// Built at -O3 like the rest, with -fno-optimize-sibling-calls (bench/spawn/CMakeLists.txt): with
// it on, GCC's tail-recursion pass turns fib(n-1) + fib(n-2) into a loop around one recursive call
// (it is the pass that keeps an accumulator), and the baseline would do less work than the task
// versions, which make both calls. noinline stops -O3 from inlining the recursion into itself a few
// levels deep, which would remove calls the task versions pay for. objdump -d serial.cpp.o shows
// two `call fib_serial` and no other call site.
#include "fib.hpp"

namespace heddle::bench::spawn {

[[gnu::noinline]] long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

}  // namespace heddle::bench::spawn
