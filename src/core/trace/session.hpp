// SPDX-License-Identifier: Apache-2.0
// A trace session's state that the writer reads: the threads' records, the clock's mapping, the
// process. Made by session.cpp when a session stops; written by chrome_writer.cpp.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "heddle/core/detail/trace.hpp"

namespace heddle::core_detail::trace {

// Ticks (now()) to steady-clock nanoseconds: ns = ns0 + (ticks - ticks0) * ns_per_tick.
struct clock_map {
  std::uint64_t ticks0 = 0;
  std::int64_t ns0 = 0;
  double ns_per_tick = 1.0;
  bool tsc = false;  // ticks are the time-stamp counter's, not nanoseconds

  std::int64_t to_ns(std::uint64_t ticks) const noexcept {
    const double d = static_cast<double>(static_cast<std::int64_t>(ticks - ticks0)) * ns_per_tick;
    return ns0 + static_cast<std::int64_t>(d);
  }
};

struct thread_snapshot {
  pid_t tid = 0;
  std::string name;
  std::vector<record> records;
  std::uint64_t dropped = 0;
};

struct snapshot {
  std::string process_name;
  pid_t pid = 0;
  long node = -1;       // the process's index in a run of several (join_process_group), or -1
  std::string boot_id;  // the host's boot: traces with the same one share CLOCK_MONOTONIC
  // This process's clock against its run's reference process (set_clock_offset), if measured.
  bool clock_measured = false;
  std::int64_t clock_offset_ns = 0, clock_uncertainty_ns = 0;
  std::size_t buffer_bytes = 0;
  clock_map clock;
  std::int64_t start_ns = 0;
  std::int64_t stop_ns = 0;
  std::vector<thread_snapshot> threads;
};

// Writes `s` to `out` as Chrome trace-event JSON. Sorts each thread's records (and closes the
// parkings the session cut). Throws std::system_error when the file cannot be written.
void write_chrome_trace(std::FILE* out, const char* path, snapshot& s);

// Makes the active session, which writes `from`, write `to` instead: creates `to` and removes
// `from`, if it is still empty. Returns what went wrong (and changes nothing), or "" when done or
// when no session writes `from`.
std::string move_output(const std::string& from, const std::string& to);

}  // namespace heddle::core_detail::trace
