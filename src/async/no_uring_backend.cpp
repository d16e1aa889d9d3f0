// SPDX-License-Identifier: Apache-2.0
// The io_uring file backend where heddle was built without liburing: asking for it fails as a kernel
// without io_uring would, so that the file engine falls back to its I/O threads, and an explicit
// request (io::use_file_backend, HEDDLE_FILE_IO=io_uring) says why.
#include <cerrno>
#include <system_error>

#include "file_engine.hpp"

namespace heddle::async_detail {

std::unique_ptr<file_backend_impl> make_uring_backend() {
  throw std::system_error(ENOSYS, std::generic_category(),
                          "heddle: this build has no io_uring file backend (it was built without liburing)");
}

}  // namespace heddle::async_detail
