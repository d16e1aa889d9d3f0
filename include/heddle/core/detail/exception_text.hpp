// SPDX-License-Identifier: Apache-2.0
// heddle's one way to turn an exception into text, for the reports that name a failure: a queued
// item that threw with no error handler, a remote handler's exception, a plugin's (the layers
// above). Offered to the layers above (cmake/check_layer_includes.cmake); only compiled code
// includes it, so it is not installed.
#pragma once

#include <exception>
#include <string>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

// What `e` (not null) says: a std::exception's what(), or "T: what()" with `with_type` (T its
// dynamic type, demangled: where the text alone is vague, as a remote handler's may be); anything
// else thrown is "T (not a std::exception)". Rethrows `e` and catches it inside (microseconds: for
// reports, not hot paths); throws nothing but std::bad_alloc.
HEDDLE_EXPORT std::string exception_text(const std::exception_ptr& e, bool with_type = false);

}  // namespace heddle::core_detail
