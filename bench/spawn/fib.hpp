// fib(n) with a task per call — both children spawned — in each runtime, and the serial recursion.
#pragma once

namespace heddle::bench::spawn {

long fib_heddle(int n);        // futures: heddle::task, then *a + *b
long fib_heddle_group(int n);  // heddle::task_group, the same shape as oneTBB's
long fib_tbb(int n);           // tbb::task_group
long fib_serial(int n);        // plain recursion, built at -O1 so both calls stay

}  // namespace heddle::bench::spawn
