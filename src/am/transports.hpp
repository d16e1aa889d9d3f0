// SPDX-License-Identifier: Apache-2.0
// The backends' factories (one source file each).
#pragma once

#include <memory>

#include "heddle/am/session.hpp"
#include "transport.hpp"

namespace heddle::am_detail {

std::unique_ptr<transport> make_loopback_transport(const session_options& o);
std::unique_ptr<transport> make_shm_transport(const session_options& o);
std::unique_ptr<transport> make_tcp_transport(const session_options& o);
std::unique_ptr<transport> make_mpi_transport(session_options& o);  // fills in node and nodes from MPI

}  // namespace heddle::am_detail
