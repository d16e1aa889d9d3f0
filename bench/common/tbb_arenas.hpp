// SPDX-License-Identifier: Apache-2.0
// oneTBB at a chosen thread count, made once per count outside the timed region. Header-only: only
// suites that link TBB::tbb include it (heddle_bench_common does not depend on oneTBB).
#pragma once

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <vector>

namespace heddle::bench {

class tbb_arenas {
 public:
  explicit tbb_arenas(const std::vector<unsigned>& threads) {
    const unsigned most = threads.empty() ? 1 : *std::max_element(threads.begin(), threads.end());
    // oneTBB caps its workers at the number of cores; oversubscribed runs (4 threads on 2 cores)
    // need the cap raised for as long as the arenas live.
    if (most > std::thread::hardware_concurrency())
      control_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, most);
    for (unsigned t : threads) arenas_.try_emplace(t, std::make_unique<tbb::task_arena>(int(t)));
  }
  // The arena for `threads`: the calling thread joins it in execute() as one of its `threads`.
  tbb::task_arena& operator[](unsigned threads) { return *arenas_.at(threads); }

 private:
  std::unique_ptr<tbb::global_control> control_;
  std::map<unsigned, std::unique_ptr<tbb::task_arena>> arenas_;
};

}  // namespace heddle::bench
