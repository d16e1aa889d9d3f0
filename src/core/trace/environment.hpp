// SPDX-License-Identifier: Apache-2.0
// HEDDLE_TRACE=FILE (environment.cpp). The one instance is defined in session.cpp, so that every
// program that links the recorder (a static library's objects are linked when referenced) has it.
#pragma once

#include <string>

#include "heddle/core/detail/trace_extension.hpp"

namespace heddle::core_detail::trace {

class environment_session {
 public:
  environment_session();
  ~environment_session();
  environment_session(const environment_session&) = delete;
  environment_session& operator=(const environment_session&) = delete;

  // This process joined a run of several (join_process_group): if HEDDLE_TRACE's session is being
  // recorded, it goes on into the member's own file. Exits with status 2 if that cannot be created.
  static void joined(const process_group_member& member) noexcept;

 private:
  bool started_ = false;
  std::string base_;  // HEDDLE_TRACE's value
  std::string file_;  // the file being written: base_, or this process's own in a run of several
};

}  // namespace heddle::core_detail::trace
