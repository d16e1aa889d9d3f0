// SPDX-License-Identifier: Apache-2.0
// Waiting for an MPI request as a future: the runtime's MPI engine (one service thread) tests the
// requests it holds with MPI_Testsome, spinning briefly and then backing off to a millisecond (MPI
// cannot wake a thread), and completes each request's future with its MPI_Status. A task that
// depends on a message (`then` on the future, a when_all over many) waits without holding a worker.
//
// Part of the heddle::mpi library (it links Open MPI), apart from the core. The engine's thread
// makes MPI calls while the program's threads make theirs: MPI must run at MPI_THREAD_MULTIPLE
// (MPI_Init_thread); at a lower level, or before MPI_Init or after MPI_Finalize, the future fails
// with std::runtime_error saying so. The request belongs to heddle from the call on: do not test,
// wait on or free it yourself. A request that completes with an error (a message truncated, with
// MPI_ERRORS_RETURN on its communicator) fails its future with heddle::mpi_error, carrying MPI's
// error class and text. A runtime that stops with requests pending fails their futures with
// task_cancelled and leaves the requests active.
//
// Calling: thread-safe; any thread. With a runtime the wait belongs to it (`rt` must be alive; a
// stopping one gives a future failed with task_cancelled); without one, to the calling thread's
// runtime: its worker's, the one it runs a successor for or has entered (runtime::execute), else
// the default runtime, started on first use.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

#include "heddle/async/detail/start_op.hpp"
#include "heddle/async/errors.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

// An MPI request that completed with an error.
class HEDDLE_EXPORT mpi_error : public std::runtime_error {
 public:
  mpi_error(int error_class, const std::string& what) : std::runtime_error(what), class_(error_class) {}
  ~mpi_error() override;                               // the key function, in src/async/mpi_engine.cpp
  int error_class() const noexcept { return class_; }  // MPI_ERR_TRUNCATE, ...

 private:
  int class_;
};

namespace async_detail {
HEDDLE_EXPORT heddle::core_detail::future_state<MPI_Status>* wait_mpi(heddle::core_detail::runtime_core* core,
                                                                      MPI_Request request);
}  // namespace async_detail

namespace io {

// The status of `request` once it completes (MPI_REQUEST_NULL: at once, an empty status).
// Thread-safe; any thread (without `rt`: the calling thread's runtime, above).
inline future<MPI_Status> wait_mpi(runtime& rt, MPI_Request request) {
  return async_detail::start_on<async_detail::wait_mpi>(rt, request);
}
inline future<MPI_Status> wait_mpi(MPI_Request request) {
  return async_detail::start_here<async_detail::wait_mpi>(request);
}

}  // namespace io
}  // namespace heddle
