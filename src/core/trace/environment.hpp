// HEDDLE_TRACE=FILE (environment.cpp). The one instance is defined in session.cpp, so that every
// program that links the recorder (a static library's objects are linked when referenced) has it.
#pragma once

#include <string>

namespace heddle::core_detail::trace {

class environment_session {
 public:
  environment_session();
  ~environment_session();
  environment_session(const environment_session&) = delete;
  environment_session& operator=(const environment_session&) = delete;

 private:
  bool started_ = false;
  // Under an MPI launcher that gives the run's size: HEDDLE_TRACE's value, this rank and the ranks,
  // for the gathering at exit (environment.cpp); ranks_ 0 otherwise.
  std::string base_;
  long rank_ = -1, ranks_ = 0;
};

}  // namespace heddle::core_detail::trace
