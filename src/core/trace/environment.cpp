// HEDDLE_TRACE=FILE: a session from the library's start to the process's exit.
//
// Under an MPI launcher (mpirun sets every rank's OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK) the
// ranks would all write FILE: each writes FILE.rank<K>.json instead, and the run's traces are
// gathered into FILE when the launcher also says how many ranks there are (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE): each rank, once its file is written, leaves FILE.rank<K>.json.done beside it; rank 0
// waits for every rank's mark (up to gather_patience), then runs `heddle-trace merge FILE
// FILE.rank0.json ...` (merge_traces: PATH's, else the installed one) and removes the ranks' files. Should a
// rank not finish, or the ranks not share a file system, or merge fail, the files stay and rank 0
// says how to merge them. heddle-run gives each node its own file and merges them itself (its nodes
// have HEDDLE_NODE).
//
// Started by a static object of the core library, before main; written by its destructor, after
// the default runtime (made later, destroyed earlier) has stopped its workers. A bad value is the
// user's error: a message naming the variable and the reason, and exit status 2 before main runs,
// rather than a program that runs without the trace it was asked for.
#include "environment.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "heddle/core/detail/trace_merge.hpp"
#include "heddle/core/trace.hpp"

namespace heddle::core_detail::trace {

namespace {

// "16M", "4096", "1G", "512K": bytes, binary multiples.
bool parse_size(const char* text, std::size_t& out) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || errno != 0 || text[0] == '-') return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; ++end; break;
    case 'M': case 'm': shift = 20; ++end; break;
    case 'G': case 'g': shift = 30; ++end; break;
    default: return false;
  }
  if (*end != '\0' || v > (~0ull >> shift)) return false;
  out = static_cast<std::size_t>(v << shift);
  return true;
}

// How long rank 0 waits at its exit for the other ranks' traces.
constexpr std::chrono::seconds gather_patience{60};

// The number of ranks the MPI launcher started, 0 if it does not say.
long world_size() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v && *v) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n > 0) return n;
    }
  return 0;
}

std::string rank_file(const std::string& base, long rank) { return base + ".rank" + std::to_string(rank) + ".json"; }
std::string done_mark(const std::string& base, long rank) { return rank_file(base, rank) + ".done"; }

// Rank `rank` of `ranks` wrote its trace: mark it; rank 0 gathers them all into `base`.
void gather(const std::string& base, long rank, long ranks) {
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
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: rank %ld's trace did not come within %lld s (a rank that failed, or "
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

environment_session::environment_session() {
  const char* path = std::getenv("HEDDLE_TRACE");
  if (!path || !*path) return;
  if constexpr (!heddle::trace::compiled_in()) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: this heddle was built without the trace recorder "
                         "(-DHEDDLE_TRACE=OFF); no trace is recorded\n", path);
    return;
  }
  heddle::trace::options o;
  if (const char* size = std::getenv("HEDDLE_TRACE_BUFFER"); size && *size && !parse_size(size, o.buffer_bytes)) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE_BUFFER='%s' is not a size in bytes (a whole number, "
                         "optionally followed by K, M or G)\n", size);
    std::exit(2);
  }
  std::string file = path;
  if (!std::getenv("HEDDLE_NODE"))
    if (const long rank = process_node(); rank >= 0) {
      file = rank_file(path, rank);
      if (const long ranks = world_size(); ranks > 1) {
        base_ = path;
        rank_ = rank;
        ranks_ = ranks;
        std::remove(done_mark(base_, rank_).c_str());  // a mark left by an earlier run is not this one's
      }
    }
  try {
    heddle::trace::start(file, o);
    started_ = true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s\n", path, e.what());
    std::exit(2);
  }
}

environment_session::~environment_session() {
  if (!started_) return;
  if (heddle::trace::active()) {  // else the program stopped it itself, which wrote the file
    try {
      const heddle::trace::result r = heddle::trace::stop();
      if (r.dropped)
        std::fprintf(stderr, "heddle: trace %s: %llu records, %llu dropped (full buffers: raise "
                             "HEDDLE_TRACE_BUFFER)\n", r.path.c_str(),
                     static_cast<unsigned long long>(r.records), static_cast<unsigned long long>(r.dropped));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle: HEDDLE_TRACE: %s\n", e.what());
    }
  }
  // Gathered even when this rank's file failed: rank 0 then need not wait for it, and the merge
  // names the file it cannot read.
  if (ranks_ > 1) gather(base_, rank_, ranks_);
}

}  // namespace heddle::core_detail::trace
