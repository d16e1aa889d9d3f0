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
//   HEDDLE_TLS_MODEL   on the thread-locals that inline fast paths read (the calling worker, the
//                      running queue). Inside heddle's own libraries they use the initial-exec
//                      model (one %fs-relative load, the cost of the static build), which asks the
//                      dynamic loader to place heddle's few bytes of thread-local storage in the
//                      static TLS block; a program or plugin that includes the headers lets its
//                      compiler choose: an executable gets the same single load, a dlopen()ed
//                      plugin the general-dynamic model, which works wherever it is loaded.
//
// ELF needs no import/export distinction: the same attribute serves the library and its users.
#pragma once

#define HEDDLE_EXPORT [[gnu::visibility("default")]]

#if defined(HEDDLE_BUILDING_LIBRARY)
#define HEDDLE_TLS_MODEL [[gnu::tls_model("initial-exec")]]
#else
#define HEDDLE_TLS_MODEL
#endif
