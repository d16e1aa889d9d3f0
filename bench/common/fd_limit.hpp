// SPDX-License-Identifier: Apache-2.0
// Raising the process's descriptor limit, for benchmarks that hold many sockets at once (the waits
// suite's idle sockets, the coroutines suite's echo server).
#pragma once

#include <cstddef>

namespace heddle::bench {

// Soft (and, where allowed, hard) RLIMIT_NOFILE to at least `fds`; std::runtime_error if it cannot,
// saying the limits and fs.nr_open.
void raise_fd_limit(std::size_t fds);

}  // namespace heddle::bench
