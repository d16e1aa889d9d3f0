// HEDDLE_TRACE=FILE (environment.cpp). The one instance is defined in session.cpp, so that every
// program that links the recorder (a static library's objects are linked when referenced) has it.
#pragma once

namespace heddle::core_detail::trace {

class environment_session {
 public:
  environment_session();
  ~environment_session();
  environment_session(const environment_session&) = delete;
  environment_session& operator=(const environment_session&) = delete;

 private:
  bool started_ = false;
};

}  // namespace heddle::core_detail::trace
