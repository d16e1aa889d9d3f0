// SPDX-License-Identifier: Apache-2.0
#include "fd_limit.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace heddle::bench {

void raise_fd_limit(std::size_t fds) {
  rlimit l{};
  getrlimit(RLIMIT_NOFILE, &l);
  if (l.rlim_cur != RLIM_INFINITY && l.rlim_cur >= fds) return;
  rlimit want = l;
  want.rlim_cur = fds;
  if (l.rlim_max != RLIM_INFINITY && l.rlim_max < fds) want.rlim_max = fds;  // root may raise the hard limit
  if (setrlimit(RLIMIT_NOFILE, &want) != 0) {
    const int error = errno;
    long nr_open = -1;
    if (std::FILE* f = std::fopen("/proc/sys/fs/nr_open", "r")) {
      if (std::fscanf(f, "%ld", &nr_open) != 1) nr_open = -1;
      std::fclose(f);
    }
    throw std::runtime_error("needs " + std::to_string(fds) + " descriptors; RLIMIT_NOFILE is " +
                             std::to_string(l.rlim_cur) + " (hard " + std::to_string(l.rlim_max) + ", fs.nr_open " +
                             std::to_string(nr_open) + ") and setrlimit failed: " + std::strerror(error) +
                             " (run as root, or raise `ulimit -n`)");
  }
}

}  // namespace heddle::bench
