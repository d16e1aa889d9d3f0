// SPDX-License-Identifier: Apache-2.0
#include "heddle/async/detail/mpi_support.hpp"

#include <mpi.h>

namespace heddle::async_detail {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

std::string mpi_thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "thread level " + std::to_string(level);
  }
}

std::string mpi_unusable(int needed) {
  // MPI_Initialized, MPI_Finalized and MPI_Query_thread are the calls MPI allows before MPI_Init
  // and after MPI_Finalize (MPI_Query_thread once initialised), from any thread.
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized) return "MPI is not initialised (call MPI_Init_thread first)";
  if (finalized) return "MPI is finalised";
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level < needed)
    return "MPI runs at " + mpi_thread_level_name(level) + ", and heddle needs " + mpi_thread_level_name(needed) +
           ": initialise MPI with MPI_Init_thread(..., " + mpi_thread_level_name(needed) + ", ...)";
  return {};
}

}  // namespace heddle::async_detail
