// SPDX-License-Identifier: Apache-2.0
// What every user of MPI in heddle asks MPI first, and how it words MPI's errors: the async layer's
// MPI engine (io::wait_mpi) and the active messages' MPI backend. Part of heddle::mpi (compiled in
// src/async/mpi_support.cpp, linked only where MPI is found), offered to the layers above
// (cmake/check_layer_includes.cmake); compiled code includes it, so it is not installed.
#pragma once

#include <string>

#include "heddle/core/export.hpp"

namespace heddle::async_detail {

// MPI's text for the error code `code` (MPI_Error_string), or "MPI error <code>" for a code MPI
// has no text for. Any thread, whether or not MPI is initialised. Allocates the string.
HEDDLE_EXPORT std::string mpi_error_text(int code);

// MPI's name of thread level `level` ("MPI_THREAD_SERIALIZED", ...; a number it does not name).
HEDDLE_EXPORT std::string mpi_thread_level_name(int level);

// Why this process's MPI cannot serve a user that needs thread level `needed` now, or "" if it
// can: MPI not initialised yet, finalised already, or initialised at a lower thread level (the
// text names the level it runs at, the level needed and MPI_Init_thread). Three MPI queries, each
// callable from any thread at any time; no MPI call is made on the user's behalf.
HEDDLE_EXPORT std::string mpi_unusable(int needed);

}  // namespace heddle::async_detail
