// SPDX-License-Identifier: Apache-2.0
// What heddle's libraries show of themselves, static or shared (-DBUILD_SHARED_LIBS=ON).
//
// The libraries compile with hidden symbols (-fvisibility=hidden -fvisibility-inlines-hidden): a
// shared heddle exports what its users call and nothing of its internals, so that the dynamic
// linker resolves fewer symbols, calls inside a library bind directly, and a plugin cannot
// interpose an internal by accident.
//
//   HEDDLE_EXPORT      on a class, function or variable that code outside its library uses: a
//                      declared-but-compiled call, a class whose members are compiled in a library
//                      (or whose type is thrown, caught or dynamic_cast across libraries, so that
//                      its type_info is one), a thread-local the inline fast paths read.
//   HEDDLE_FAST_TLS(T, name) / HEDDLE_FAST_TLS_DEFINITION(T, name)
//                      the thread-locals that inline fast paths read (the calling worker, the
//                      running queue, ...), zero-initialised, declared in a header by the first and
//                      defined in one source file of their library by the second.
//                      Static libraries: an inline variable, which a program reads with one
//                      %fs-relative load (local-exec); the definition in the source file is
//                      nothing.
//                      Shared libraries: an inline thread-local would be one hidden copy per
//                      shared object (a plugin's task would not see the worker running it), so
//                      the variable is extern, exported, defined once in its library. Inside
//                      heddle's libraries it keeps the initial-exec model (one load through the GOT;
//                      the loader places heddle's few bytes of thread-local storage in the static TLS
//                      block); a program or plugin that includes the headers lets its compiler
//                      choose: an executable gets initial-exec, a dlopen()ed plugin the
//                      general-dynamic model, which works wherever it is loaded.
//                      constinit either way: no TLS wrapper call on access.
//
// ELF needs no import/export distinction: the same attribute serves the library and its users.
#pragma once

#include "heddle/core/build_config.hpp"

#define HEDDLE_EXPORT [[gnu::visibility("default")]]

// Inside heddle's libraries (position-independent code), initial-exec: no __tls_get_addr call.
// Elsewhere the compiler's choice: local-exec in a program that defines the variable (static
// build), initial-exec in one that does not, general-dynamic in a plugin.
#if defined(HEDDLE_BUILDING_LIBRARY)
#define HEDDLE_DETAIL_TLS_MODEL [[gnu::tls_model("initial-exec")]]
#else
#define HEDDLE_DETAIL_TLS_MODEL
#endif

#if HEDDLE_SHARED_LIBS
#define HEDDLE_FAST_TLS(T, name) HEDDLE_EXPORT extern constinit thread_local T name HEDDLE_DETAIL_TLS_MODEL
#define HEDDLE_FAST_TLS_DEFINITION(T, name) \
  constinit thread_local T name {}
#else
#define HEDDLE_FAST_TLS(T, name) \
  inline constinit thread_local T name HEDDLE_DETAIL_TLS_MODEL {}
#define HEDDLE_FAST_TLS_DEFINITION(T, name) static_assert(true, "defined inline in its header")
#endif
