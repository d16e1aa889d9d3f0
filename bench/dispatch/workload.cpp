// SPDX-License-Identifier: Apache-2.0
#include "workload.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>

namespace heddle::bench::dispatch {

std::uint64_t expected_mixsum(std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t c = 1; c <= n; ++c) sum += fmix64(c);
  return sum;
}

void check_state(const shared_state& s, std::uint64_t n, std::uint64_t mixsum, const std::string& who) {
  std::uint64_t slots = 0;
  for (std::uint64_t v : s.slots) slots += v;
  const std::uint64_t items = n ? n * (n - 1) / 2 : 0;  // items are 0 .. n-1, each once
  if (s.counter != n || s.mixsum != mixsum || slots != items)
    throw std::runtime_error(
        who + ": " + std::to_string(s.counter) + " critical sections ran, expected " + std::to_string(n) +
        (s.counter == n && s.mixsum != mixsum ? " (a counter value repeated: not mutually exclusive)" : "") +
        (s.counter == n && s.mixsum == mixsum && slots != items ? " (the slots lost an update)" : ""));
}

double heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return double(m.uordblks + m.hblkhd);
}

double rss_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128] = {};
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  unsigned long long size = 0, resident = 0;
  if (got <= 0 || std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return double(resident) * double(::sysconf(_SC_PAGESIZE));
}

void trim_heap() { ::malloc_trim(0); }

}  // namespace heddle::bench::dispatch
