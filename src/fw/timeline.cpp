// SPDX-License-Identifier: Apache-2.0
#include "heddle/fw/timeline.hpp"

#include <algorithm>

namespace heddle::fw {

std::vector<timeline_entry> timeline::entries() const {
  std::vector<timeline_entry> v;
  {
    std::lock_guard lock(m_);
    v = entries_;
  }
  std::sort(v.begin(), v.end(),
            [](const timeline_entry& a, const timeline_entry& b) { return a.start_ns < b.start_ns; });
  return v;
}

}  // namespace heddle::fw
