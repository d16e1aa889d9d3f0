// SPDX-License-Identifier: Apache-2.0
// The waits suite: many outstanding waits on 2 workers, against one thread per wait.
//   timers   N heddle::sleep_until(rt, D).then(strategy::normal, count) started by tasks, all due at
//            the same instant D; the baseline is one thread per wait (pthread, 64 KiB stack: what
//            std::thread cannot set) in std::this_thread::sleep_until(D).
//   sockets  M socketpairs, one heddle::io::read(rt, fd, 1 byte).then(strategy::normal, count)
//            pending on each; after an idle window, the main thread writes one byte to every pair.
//            The baseline is one thread per socket blocked in read(2).
// Each run happens in a child process forked for it (probes.hpp, in_child): heddle's block depot
// never returns its slabs and glibc caches thread stacks, so a second run in the same process would
// measure reused memory instead of what the waits cost.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heddle::bench::waits {

// What one run measured. Plain data: a child process sends it to heddle-bench through a pipe.
struct run_result {
  std::uint64_t n = 0;   // outstanding operations (timers, pending reads, threads)
  double start_s = 0;    // first start → every operation started (threads: every thread in its wait)
  double rss_bytes = 0;  // resident set with all n pending − before the first start (/proc/self/statm)
  // The per-wait figures leave out what the process held before the first start (the runtime, its
  // engines, what the child inherited from heddle-bench); these two are the whole process.
  double rss_total_bytes = 0;       // resident set with all n pending
  double rss_peak_bytes = 0;        // the largest resident set of the run, read at its end (VmHWM)
  double heap_bytes = 0;            // malloc's bytes in use, the same two moments (mallinfo2: uordblks + hblkhd)
  double slab_bytes = 0;            // heddle's record slabs carved meanwhile (core_detail::depot_slabs() × 64 KiB)
  double kernel_stack_bytes = 0;    // /proc/meminfo KernelStack, the same two moments (system-wide)
  double idle_s = 0;                // sockets: the idle window with every read pending
  double idle_cpu_s = 0;            // CPU time in that window of every thread but the one measuring (which sleeps)
  double completion_s = 0;          // first deadline (timers) or first write (sockets) → last successor's end
  double completion_cpu_s = 0;      // process CPU time from all started to the last successor's end
  double lateness_min_s = 0;        // timers: successor start − deadline, the first successor
  double lateness_p50_s = 0;        // ... median over the n waits
  double lateness_max_s = 0;        // ... and largest
  bool measured_before_due = true;  // timers: the memory was read before the deadline (else it is not valid)
  char error[768] = {};             // non-empty: the run failed; what happened
};

struct timer_params {
  std::uint64_t n = 0;
  unsigned workers = 2;
  double lead_s = 0;  // the deadline is this long after the first start
  double timeout_s = 0;
};

struct socket_params {
  std::uint64_t n = 0;
  unsigned workers = 2;
  double idle_s = 0;
  double timeout_s = 0;
};

// One run each, in the calling process (the suite runs them in a child: process.hpp).
run_result timers_heddle(const timer_params& p);
run_result timers_threads(const timer_params& p);
run_result sockets_heddle(const socket_params& p);
run_result sockets_threads(const socket_params& p);

// The baseline's thread stack (pthread_attr_setstacksize): small, as a program with thousands of
// waiting threads would choose. glibc adds a guard page.
inline constexpr std::size_t thread_stack_bytes = 64 * 1024;

}  // namespace heddle::bench::waits
