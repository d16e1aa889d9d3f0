// SPDX-License-Identifier: Apache-2.0
// HEDDLE_TRACE=FILE: a session from the library's start to the process's exit.
//
// In a run of several processes, the layer that knows the run (join_process_group, at its load)
// says which file this process writes instead of FILE and what happens to the run's files at exit
// (docs/trace.md, "Several processes"). It may join after this session started (its library is
// initialised after this one): the session then goes on into the process's own file, and FILE,
// created empty at the start, is removed.
//
// Started by a static object of the core library, before main; written by its destructor, after
// the default runtime (made later, destroyed earlier) has stopped its workers. A bad value is the
// user's error: a message naming the variable and the reason, and exit status 2 before main runs,
// rather than a program that runs without the trace it was asked for.
#include "environment.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "heddle/core/trace.hpp"
#include "process_group.hpp"
#include "session.hpp"

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
    // Formatted by hand: a table, one row a line.
    // clang-format off
    case 'K': case 'k': shift = 10; ++end; break;
    case 'M': case 'm': shift = 20; ++end; break;
    case 'G': case 'g': shift = 30; ++end; break;
    default: return false;
      // clang-format on
  }
  if (*end != '\0' || v > (~0ull >> shift)) return false;
  out = static_cast<std::size_t>(v << shift);
  return true;
}

// The session being recorded from the environment, once its constructor started it.
constinit std::mutex running_m;
constinit environment_session* running = nullptr;

}  // namespace

environment_session::environment_session() {
  const char* path = std::getenv("HEDDLE_TRACE");
  if (!path || !*path) return;
  if constexpr (!heddle::trace::compiled_in()) {
    std::fprintf(stderr,
                 "heddle: HEDDLE_TRACE=%s: this heddle was built without the trace recorder "
                 "(-DHEDDLE_TRACE=OFF); no trace is recorded\n",
                 path);
    return;
  }
  heddle::trace::options o;
  if (const char* size = std::getenv("HEDDLE_TRACE_BUFFER"); size && *size && !parse_size(size, o.buffer_bytes)) {
    std::fprintf(stderr,
                 "heddle: HEDDLE_TRACE_BUFFER='%s' is not a size in bytes (a whole number, "
                 "optionally followed by K, M or G)\n",
                 size);
    std::exit(2);
  }
  std::lock_guard lock(running_m);
  base_ = path;
  // Joined already: a static link may make the layer's objects first.
  const process_group_member group = joined_group();
  file_ = group.own_file ? group.own_file(base_) : base_;
  try {
    heddle::trace::start(file_, o);
    started_ = true;
    running = this;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s\n", path, e.what());
    std::exit(2);
  }
}

void environment_session::joined(const process_group_member& member) noexcept {
  std::lock_guard lock(running_m);
  if (!running || !member.own_file) return;
  environment_session& s = *running;
  std::string file;
  try {
    file = member.own_file(s.base_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s\n", s.base_.c_str(), e.what());
    std::exit(2);
  }
  if (file == s.file_) return;
  if (const std::string error = move_output(s.file_, file); !error.empty()) {
    std::fprintf(stderr, "heddle: HEDDLE_TRACE=%s: %s\n", s.base_.c_str(), error.c_str());
    std::exit(2);
  }
  s.file_ = std::move(file);
}

environment_session::~environment_session() {
  {
    std::lock_guard lock(running_m);
    running = nullptr;
  }
  if (!started_) return;
  if (heddle::trace::active()) {  // else the program stopped it itself, which wrote the file
    try {
      const heddle::trace::result r = heddle::trace::stop();
      if (r.dropped)
        std::fprintf(stderr,
                     "heddle: trace %s: %llu records, %llu dropped (full buffers: raise "
                     "HEDDLE_TRACE_BUFFER)\n",
                     r.path.c_str(), static_cast<unsigned long long>(r.records),
                     static_cast<unsigned long long>(r.dropped));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "heddle: HEDDLE_TRACE: %s\n", e.what());
    }
  }
  // Even when this process's file failed: the others of its run then need not wait for it.
  if (const process_group_member group = joined_group(); group.after_exit) group.after_exit(base_);
}

}  // namespace heddle::core_detail::trace
