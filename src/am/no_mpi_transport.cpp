// SPDX-License-Identifier: Apache-2.0
// The MPI backend where heddle was built without MPI: a session that asks for it (backend::mpi, or a
// program started by mpirun) fails with an error that says so, and every other backend works.
#include "heddle/am/errors.hpp"
#include "transports.hpp"

namespace heddle::am_detail {

std::unique_ptr<transport> make_mpi_transport(session_options&) {
  throw session_error("heddle::offload: the mpi backend is not in this build (heddle was built without MPI); "
                      "use loopback, shm or tcp");
}

}  // namespace heddle::am_detail
