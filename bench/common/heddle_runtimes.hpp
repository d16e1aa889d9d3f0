// SPDX-License-Identifier: Apache-2.0
// heddle runtimes at chosen thread counts, made once per count outside the timed region.
// Header-only: only suites that link heddle::heddle include it.
#pragma once

#include <heddle/heddle.hpp>

#include <map>
#include <memory>
#include <vector>

namespace heddle::bench {

class heddle_runtimes {
 public:
  explicit heddle_runtimes(const std::vector<unsigned>& threads) {
    for (unsigned t : threads) runtimes_.try_emplace(t, std::make_unique<heddle::runtime>(t));
  }
  heddle::runtime& operator[](unsigned threads) { return *runtimes_.at(threads); }

 private:
  std::map<unsigned, std::unique_ptr<heddle::runtime>> runtimes_;
};

}  // namespace heddle::bench
