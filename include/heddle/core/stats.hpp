// Scheduler counters, summed over the workers of one runtime.
#pragma once

#include <cstdint>

namespace heddle {

struct runtime_stats {
  unsigned workers = 0;
  std::uint64_t spawned = 0;        // tasks pushed by workers onto their own deques
  std::uint64_t injected = 0;       // tasks submitted from threads outside the runtime
  std::uint64_t express = 0;        // tasks submitted on the express lane
  std::uint64_t executed = 0;       // tasks run to completion
  std::uint64_t steals = 0;         // tasks taken from another worker's deque
  std::uint64_t failed_steals = 0;  // steal attempts that found nothing or lost a race
  std::uint64_t parks = 0;          // times a worker went to sleep in the kernel
  std::uint64_t wakeups = 0;        // times a worker woke up another one
};

}  // namespace heddle
