// SPDX-License-Identifier: Apache-2.0
// Starting heddle-reco-job processes and measuring them from outside and from inside: wall time as
// the parent sees it (process start and library loading included), the processes' memory as the
// parent samples it while they run (their proportional set size, PSS, summed), and the JSON line
// each prints (its checksum, its event loop's time, its own peak RSS).
//
// Why PSS sampled by the parent, not wait4's ru_maxrss: a child started with posix_spawn shares the
// parent's address space until its exec, and Linux carries that address space's high-water mark
// into the child's ru_maxrss, so each child reported max(heddle-bench's peak, its own); and RSS
// counts the shared libraries (FastJet, HDF5, libstdc++) once per process, twice for two. PSS
// charges each shared page to its processes in equal parts, so two processes' PSS summed counts
// their common pages once (pages heddle-bench maps too, its libraries, are split with it as well).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace heddle::bench::reco {

// One process, as it reported itself and as the parent saw it.
struct process_result {
  std::string checksum;  // its run_report::checksum, "0x..."
  std::uint64_t events_checksum =
      0;                      // its run_report::events_checksum: the events' share, which adds up over a split job
  std::uint64_t events = 0;   // events it ran
  double loop_s = 0;          // its event loop's wall time, as the process measured it (run_report::wall_s)
  double wall_s = 0;          // from its start to its exit, as the parent saw it
  double vm_hwm_bytes = 0;    // its peak RSS (VmHWM of /proc/self/status), read by the process at its end
  double peak_pss_bytes = 0;  // the largest of its own PSS samples
  // The largest of its RSS samples (statm's resident pages): beside vm_hwm_bytes, how near the
  // samples come to the process's true peak.
  double sampled_peak_rss_bytes = 0;
};

struct child_result {
  double wall_s = 0;  // from the start of the first process to the exit of the last
  // The largest, over the parent's samples, of the processes' PSS summed at the sample's time (a
  // process that has exited counts 0). Sampled every `sample_every` (run_children).
  double peak_pss_bytes = 0;
  double peak_anon_bytes = 0;             // the same of their anonymous memory alone (no file or library pages)
  int samples = 0;                        // samples taken
  std::vector<process_result> processes;  // in start order
};

// How often run_children samples the processes' memory by default.
inline constexpr std::chrono::milliseconds pss_sample_every{5};

// Starts one process per argument list (argv[0] is the program), all at once, samples their memory
// every `sample_every` until all have exited, and reads the JSON line each printed last on stdout
// (heddle-reco-job's: "checksum", "events_checksum", "events", "loop_s", "vm_hwm_bytes"). Throws std::runtime_error
// naming the command when one fails or prints no such line.
//
// A sample's PSS of one process: its anonymous memory read from /proc/PID/statm (resident less
// shared pages; anonymous pages of an exec'd process that does not fork are its own, so their PSS
// is their RSS), plus the rest of its PSS (file and shared-memory pages, the "Pss:" line of
// /proc/PID/smaps_rollup less its "Pss_Anon:") as last read, read at its first sample and then every
// 200 ms. Why two files: the kernel computes smaps_rollup by walking every page of the process,
// measured 0.8 ms of CPU for a 35 MiB job, so reading it every 5 ms would take a sixth of a core per
// process from the job being timed, twice as much from two processes as from one; statm reads
// counters (microseconds). The anonymous part is what changes from event to event (the products,
// FastJet's cluster sequences: measured 14-34 MiB within 200 ms at mu 140); the rest, mostly the
// libraries' pages, stays the same once they are loaded (measured constant over a run).
child_result run_children(const std::vector<std::vector<std::string>>& commands,
                          std::chrono::milliseconds sample_every = pss_sample_every);

}  // namespace heddle::bench::reco
