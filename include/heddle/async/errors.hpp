// SPDX-License-Identifier: Apache-2.0
// Errors of the async layer. Failed system calls come out of futures as std::system_error with the
// errno (std::generic_category()); the end of a stream as heddle::io::errc::end_of_file.
#pragma once

#include <string>
#include <system_error>
#include <type_traits>

#include "heddle/core/errors.hpp"
#include "heddle/core/export.hpp"

namespace heddle {

// A pending operation whose cancellation token was cancelled before it completed.
class HEDDLE_EXPORT operation_cancelled : public task_cancelled {
 public:
  ~operation_cancelled() override;
  using task_cancelled::task_cancelled;
};

namespace io {

enum class errc {
  end_of_file = 1,  // a read found the end of the stream (the peer closed, or past the end of a file)
};

// The category of errc ("heddle.io"). Thread-safe; any thread.
HEDDLE_EXPORT const std::error_category& category() noexcept;
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), category()}; }

}  // namespace io
}  // namespace heddle

template <>
struct std::is_error_code_enum<heddle::io::errc> : std::true_type {};
