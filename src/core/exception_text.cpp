// SPDX-License-Identifier: Apache-2.0
#include "heddle/core/detail/exception_text.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>

namespace heddle::core_detail {

namespace {

// The type of the exception being handled, demangled (the Itanium ABI names the type of a
// catch (...)'s exception, which the language does not).
std::string current_exception_type() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  if (!t) return "an exception";
  int status = 0;
  char* d = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : t->name();
  std::free(d);
  return r;
}

}  // namespace

std::string exception_text(const std::exception_ptr& e, bool with_type) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return with_type ? current_exception_type() + ": " + x.what() : std::string(x.what());
  } catch (...) {
    return current_exception_type() + " (not a std::exception)";
  }
}

}  // namespace heddle::core_detail
