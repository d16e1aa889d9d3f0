// HEDDLE_TRACE=FILE: a session from the library's start to the process's exit.
//
// Under an MPI launcher (mpirun sets every rank's OMPI_COMM_WORLD_RANK, PMIX_RANK or PMI_RANK) the
// ranks would all write FILE: each writes FILE.rank<K>.json instead, which `heddle-trace merge`
// joins (heddle-run gives each node its own file and merges them itself).
//
// Started by a static object of the core library, before main; written by its destructor, after
// the default runtime (made later, destroyed earlier) has stopped its workers. A bad value is the
// user's error: a message naming the variable and the reason, and exit status 2 before main runs,
// rather than a program that runs without the trace it was asked for.
#include "environment.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

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
    if (const long rank = process_node(); rank >= 0) file += ".rank" + std::to_string(rank) + ".json";
  try {
    heddle::trace::start(file, o);
    started_ = true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s\n", path, e.what());
    std::exit(2);
  }
}

environment_session::~environment_session() {
  if (!started_ || !heddle::trace::active()) return;  // the program stopped it itself
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


}  // namespace heddle::core_detail::trace
