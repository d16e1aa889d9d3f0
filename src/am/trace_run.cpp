// SPDX-License-Identifier: Apache-2.0
// HEDDLE_TRACE in a run of several processes: which node this process is, which file it writes,
// and, under an MPI launcher, the gathering of the ranks' files into one at the run's end.
//
// A node heddle-run started has HEDDLE_NODE and its own HEDDLE_TRACE file; heddle-run merges the
// nodes' files itself. Under an MPI launcher (mpirun sets every rank's OMPI_COMM_WORLD_RANK,
// PMIX_RANK or PMI_RANK) the ranks would all write FILE: each writes FILE.rank<K>.json instead, and
// the run's traces are gathered into FILE when the launcher also says how many ranks there are
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE): each rank, once its file is written, leaves
// FILE.rank<K>.json.done beside it; rank 0 waits for every rank's mark (up to gather_patience), then
// runs `heddle-trace merge FILE FILE.rank0.json ...` (merge_traces: PATH's, else the installed one)
// and removes the ranks' files. Should a rank not finish, or the ranks not share a file system, or
// merge fail, the files stay and rank 0 says how to merge them. (Through files rather than MPI: the
// trace is written when the library unloads, after the program's MPI_Finalize.)
#include "trace_run.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "heddle/am/detail/trace_merge.hpp"
#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::am_detail {

namespace {

// A whole number >= min in the first of `names` that is set, else -1.
long first_number(std::initializer_list<const char*> names, long min) noexcept {
  for (const char* name : names)
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= min) return n;
    }
  return -1;
}

// This process's node: HEDDLE_NODE (heddle-run), else the MPI rank its launcher gives it, else -1.
long node() noexcept { return first_number({"HEDDLE_NODE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}, 0); }
// Whether heddle-run started it (which gives each node its own file and merges them).
bool from_heddle_run() noexcept { return std::getenv("HEDDLE_NODE") != nullptr; }
// The number of ranks the MPI launcher started, 0 if it does not say.
long world_size() noexcept {
  const long n = first_number({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, 1);
  return n < 0 ? 0 : n;
}

// How long rank 0 waits at its exit for the other ranks' traces.
constexpr std::chrono::seconds gather_patience{60};

std::string rank_file(const std::string& base, long rank) { return base + ".rank" + std::to_string(rank) + ".json"; }
std::string done_mark(const std::string& base, long rank) { return rank_file(base, rank) + ".done"; }

std::string own_file(const std::string& base) {
  if (from_heddle_run()) return base;
  const long rank = node();
  // A mark left by an earlier run is not this one's.
  if (world_size() > 1) std::remove(done_mark(base, rank).c_str());
  return rank_file(base, rank);
}

// This rank wrote its trace: mark it; rank 0 gathers them all into `base`.
void gather(const std::string& base) {
  const long ranks = world_size(), rank = node();
  if (from_heddle_run() || ranks <= 1) return;
  if (std::FILE* mark = std::fopen(done_mark(base, rank).c_str(), "w")) std::fclose(mark);
  if (rank != 0) return;
  std::vector<std::string> parts;
  for (long k = 0; k < ranks; ++k) parts.push_back(rank_file(base, k));
  const auto give_up = std::chrono::steady_clock::now() + gather_patience;
  long missing = -1;
  for (;;) {
    missing = -1;
    for (long k = 0; k < ranks && missing < 0; ++k)
      if (::access(done_mark(base, k).c_str(), F_OK) != 0) missing = k;
    if (missing < 0 || std::chrono::steady_clock::now() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The marks served the meeting only: gone whatever follows.
  for (long k = 0; k < ranks; ++k) std::remove(done_mark(base, k).c_str());
  const char* how = "merge them with: heddle-trace merge FILE FILE.rank*.json";
  if (missing >= 0) {
    std::fprintf(stderr,
                 "heddle: HEDDLE_TRACE=%s: rank %ld's trace did not come within %lld s (a rank that failed, or "
                 "ranks on hosts without a shared file system): the ranks' traces stay in %s.rank*.json; %s\n",
                 base.c_str(), missing, static_cast<long long>(gather_patience.count()), base.c_str(), how);
    return;
  }
  if (const int status = merge_traces(base, parts); status != 0) {
    const std::string why = status < 0 ? "heddle-trace could not be started (neither in PATH nor installed)"
                                       : "heddle-trace merge failed (exit status " + std::to_string(status) + ")";
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s: the ranks' traces stay in %s.rank*.json; %s\n", base.c_str(),
                 why.c_str(), base.c_str(), how);
    return;
  }
  for (const std::string& part : parts) std::remove(part.c_str());
}

}  // namespace

void join_trace_run() noexcept {
  const long index = node();
  if (index < 0) return;
  core_detail::trace::process_group_member member;
  member.index = index;
  member.own_file = own_file;
  member.after_exit = gather;
  core_detail::trace::join_process_group(member);
}

}  // namespace heddle::am_detail
