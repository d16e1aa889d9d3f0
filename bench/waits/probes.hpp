// SPDX-License-Identifier: Apache-2.0
// What the waits suite reads about its own process, the limits it raises, the baseline's threads,
// and the child process each run happens in.
#pragma once

#include "fd_limit.hpp"

#include <pthread.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "waits.hpp"

namespace heddle::bench::waits {

using clock = std::chrono::steady_clock;

inline double seconds(clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Resident set of this process in bytes (/proc/self/statm, second field × page size).
std::size_t rss_bytes();
// The largest resident set this process has had, in bytes (/proc/self/status VmHWM); 0 if unreadable.
std::size_t peak_rss_bytes();
// Bytes malloc has handed out and not got back, every arena (mallinfo2: uordblks + hblkhd).
std::size_t heap_bytes();
// Kernel stacks of every thread on the machine, bytes (/proc/meminfo KernelStack).
std::size_t kernel_stack_bytes();
// CPU time of this process, every thread, user + system (getrusage(RUSAGE_SELF)), seconds.
double cpu_seconds();
// CPU time of every thread of this process but the calling one, from /proc/self/task/*/schedstat
// (nanoseconds on the CPU; reading them costs only the calling thread). −1 if unavailable.
double others_cpu_seconds();

// Everything read at one moment, for deltas.
struct snapshot {
  std::size_t rss = 0, heap = 0, kernel_stack = 0, slabs = 0;
  static snapshot take(std::size_t depot_slabs = 0);
};
// Fills r.rss_bytes, heap_bytes, kernel_stack_bytes and slab_bytes with after − before, and
// r.rss_total_bytes with after's RSS.
void store_delta(run_result& r, const snapshot& before, const snapshot& after);

// The most socketpairs this process can hold, at most `wanted`: RLIMIT_NOFILE raised as far as it
// goes (the hard limit binds without CAP_SYS_RESOURCE), less the descriptors already open and a
// reserve of 64, halved, rounded down to a multiple of 100 (of 10 below 1,000).
std::size_t socketpairs_that_fit(std::size_t wanted);
// The most threads this process should make, at most `wanted`: what kernel.pid_max and
// kernel.threads-max leave beside the tasks already on the machine (/proc/loadavg), and
// vm.max_map_count (two mappings per thread: stack and guard page) and a cgroup's pids.max, each less
// a margin of 1,000,
// rounded down to a multiple of 100. `why` says which limit bound, if one did.
std::size_t threads_that_fit(std::size_t wanted, std::string& why);
// RLIMIT_NPROC to unlimited where allowed (root), else the soft limit to the hard one.
void raise_thread_limit();

// n threads with thread_stack_bytes stacks, each running body(i). std::runtime_error naming the
// first that pthread_create refused (and the limits that decide it) if not all could be made.
class thread_set {
 public:
  explicit thread_set(std::function<void(std::size_t)> body) : body_(std::move(body)) {}
  ~thread_set();
  void reserve(std::size_t n);  // room for n handles, allocated now
  void start(std::size_t n);
  void join();

 private:
  static void* main(void* arg);
  struct start_arg {
    thread_set* set;
    std::size_t i;
  };
  std::function<void(std::size_t)> body_;
  std::vector<start_arg> args_;
  std::vector<pthread_t> threads_;
  std::size_t started_ = 0;
};

// Runs f in a child process forked for it and returns what it returned, with rss_peak_bytes set to
// the child's peak RSS once f has returned. The child's error (or its death: a signal, an exit
// status, no answer within timeout_s) becomes std::runtime_error here.
run_result in_child(const std::function<run_result()>& f, double timeout_s, const std::string& what);

// "1.23 M", "456 k", "78.9": a rate or a count for the tables.
std::string si(double x);

// Fills r.lateness_min_s, lateness_p50_s and lateness_max_s from the successors' start times (ns since the epoch of
// steady_clock) and their deadline.
void store_lateness(run_result& r, std::vector<std::int64_t> start_ns, std::int64_t deadline_ns);

// Copies `message` into r.error (truncated to fit).
void set_error(run_result& r, const std::string& message);

}  // namespace heddle::bench::waits
