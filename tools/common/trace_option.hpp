// SPDX-License-Identifier: Apache-2.0
// --trace FILE, as heddle-fw and heddle-bench spell it: a trace of the tool's work (docs/trace.md).
// The file is opened before the work starts, so a bad path fails at once (exit 2), and written
// when the work is done; the tool then says where it went and whether records were dropped.
#pragma once

#include <heddle/core/trace.hpp>

#include <cstdio>
#include <string>

namespace heddle::tool {

class trace_option {
 public:
  // Starts recording into `path` unless it is empty; `tool` names the tool in its messages. Throws
  // heddle::trace::trace_error.
  trace_option(const char* tool, std::string path) : tool_(tool), path_(std::move(path)) {
    if (!path_.empty()) heddle::trace::start(path_);
  }
  // Writes the trace and reports it on stderr; false (with the reason printed) if it failed. Once:
  // later calls, and the destructor, find nothing left to write.
  bool finish() {
    if (path_.empty() || !heddle::trace::active()) return true;
    try {
      const heddle::trace::result r = heddle::trace::stop();
      std::fprintf(stderr, "%s: trace: %s (%llu records from %u threads%s)\n", tool_, r.path.c_str(),
                   static_cast<unsigned long long>(r.records), r.threads,
                   r.dropped ? (", " + std::to_string(r.dropped) + " dropped: full buffers").c_str() : "");
      return true;
    } catch (const heddle::trace::trace_error& e) {
      std::fprintf(stderr, "%s: error: %s\n", tool_, e.what());
      return false;
    }
  }
  // A tool that leaves by an error finish() did not see still writes the trace: it shows where.
  ~trace_option() { finish(); }
  trace_option(const trace_option&) = delete;
  trace_option& operator=(const trace_option&) = delete;

 private:
  const char* tool_;
  std::string path_;
};

}  // namespace heddle::tool
