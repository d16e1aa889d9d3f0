// SPDX-License-Identifier: Apache-2.0
// What every transport has unless it does better: buffers on this process's heap.
#include "transport.hpp"

#include <new>

namespace heddle::am_detail {

local_allocation transport::allocate(std::uint64_t bytes, std::uint64_t, std::size_t alignment) {
  const std::size_t n = bytes ? static_cast<std::size_t>(bytes) : 1;
  void* p = ::operator new(n, std::align_val_t(alignment));
  return {static_cast<std::byte*>(p), bytes,
          std::shared_ptr<void>(p, [alignment](void* q) { ::operator delete(q, std::align_val_t(alignment)); })};
}

}  // namespace heddle::am_detail
