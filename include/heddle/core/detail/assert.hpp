// SPDX-License-Identifier: Apache-2.0
// heddle's one way to end the process, and its checked invariants. Offered to the layers above
// (cmake/check_layer_includes.cmake); installed, since the public headers' inline code uses it.
//
// Every fatal end goes through fatal(), whose first words say whose fault it is, as libdispatch's
// "BUG IN CLIENT OF LIBDISPATCH" and "BUG IN LIBDISPATCH" do:
//   heddle: misuse: WHERE: WHAT           the caller broke a call's contract (fatal_misuse): more
//                                         group::leave() than enter(), a runtime destroyed by its
//                                         own task ...
//   heddle: internal error: WHERE: WHAT   heddle broke its own invariant (fatal_internal, and every
//                                         failed HEDDLE_ASSERT): a bug in heddle, to be reported
//   heddle: fatal: WHERE: WHAT            a failure nobody can be told of (fatal_unrecoverable): an
//                                         exception with no handler to go to, memory exhausted
//                                         where no caller waits for an answer
// then std::abort(). The line is written with one call and without allocating (the out-of-memory
// paths end here too); WHAT is cut at 1 KiB.
//
// HEDDLE_ASSERT(cond, "message") checks an invariant a comment or a contract states, where
// assertions are compiled in (HEDDLE_ASSERTIONS defined: the CMake option of the same name, on in
// Debug and in the sanitizer builds, off in Release; heddle/core/build_config.hpp records it).
// Otherwise it compiles to nothing and does not evaluate `cond` (which must then have no effect the
// program needs): the checks cost a Release build nothing.
#pragma once

#include <string_view>

#include "heddle/core/build_config.hpp"
#include "heddle/core/export.hpp"

namespace heddle::core_detail {

enum class fatal_kind : unsigned char { misuse, internal, unrecoverable };

// Writes "heddle: <kind>: <where>: <what>" (a source path in `where` shortened to what follows
// its src/ or include/) and a newline to stderr, then aborts. Thread-safe; async-signal-unsafe
// (stdio). Any thread, any time.
[[noreturn]] HEDDLE_EXPORT void fatal(fatal_kind kind, std::string_view what, std::string_view where) noexcept;

// The caller broke the contract of `where` (the call, as "heddle::group::leave").
[[noreturn]] inline void fatal_misuse(std::string_view what, std::string_view where) noexcept {
  fatal(fatal_kind::misuse, what, where);
}
// heddle broke its own invariant at `where` (a call, or "file:line").
[[noreturn]] inline void fatal_internal(std::string_view what, std::string_view where) noexcept {
  fatal(fatal_kind::internal, what, where);
}
// A failure with nobody to report it to, at `where`.
[[noreturn]] inline void fatal_unrecoverable(std::string_view what, std::string_view where) noexcept {
  fatal(fatal_kind::unrecoverable, what, where);
}

// A failed HEDDLE_ASSERT: "heddle: internal error: FILE:LINE: `COND` does not hold: MESSAGE".
// Out of line and cold, so that a check costs its branch only.
[[noreturn, gnu::cold]] HEDDLE_EXPORT void assertion_failed(const char* condition, const char* message,
                                                            const char* where) noexcept;

#ifdef HEDDLE_ASSERTIONS
inline constexpr bool assertions_enabled = true;
#else
inline constexpr bool assertions_enabled = false;
#endif

}  // namespace heddle::core_detail

#define HEDDLE_DETAIL_STRINGIZE2(x) #x
#define HEDDLE_DETAIL_STRINGIZE(x) HEDDLE_DETAIL_STRINGIZE2(x)

// The two forms HEDDLE_ASSERT takes, named so that a test can check both in any build.
// On: evaluates `cond` once, and ends through assertion_failed() where it is false.
#define HEDDLE_DETAIL_ASSERT_ON(cond, message)  \
  (__builtin_expect(static_cast<bool>(cond), 1) \
       ? static_cast<void>(0)                   \
       : ::heddle::core_detail::assertion_failed(#cond, message, __FILE__ ":" HEDDLE_DETAIL_STRINGIZE(__LINE__)))
// Off: `cond` in an unevaluated operand: no code, no evaluation, but still compiled (a check that no
// longer compiles is found in Release too) and its variables count as used (no -Wunused warning
// for a variable only a check reads).
#define HEDDLE_DETAIL_ASSERT_OFF(cond, message) static_cast<void>(sizeof(!(cond)) + sizeof(message))

#ifdef HEDDLE_ASSERTIONS
#define HEDDLE_ASSERT(cond, message) HEDDLE_DETAIL_ASSERT_ON(cond, message)
#else
#define HEDDLE_ASSERT(cond, message) HEDDLE_DETAIL_ASSERT_OFF(cond, message)
#endif
