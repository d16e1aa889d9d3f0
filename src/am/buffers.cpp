// SPDX-License-Identifier: Apache-2.0
#include "buffers.hpp"

#include <string>

#include "heddle/am/errors.hpp"

namespace heddle::am_detail {

buffer_ref buffer_table::allocate(transport& t, node_id here, std::uint64_t bytes, std::size_t alignment) {
  const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  local_allocation a = t.allocate(bytes, id, alignment);
  std::lock_guard lock(m_);
  buffers_.emplace(id, local_buffer{std::move(a), here});
  return buffer_ref{here, id, 0, bytes};
}

std::unordered_map<std::uint64_t, buffer_table::local_buffer>::iterator buffer_table::find(std::uint64_t id,
                                                                                           node_id here) {
  auto it = buffers_.find(id);
  if (it == buffers_.end() || it->second.node != here)
    throw session_error("heddle::offload: node " + std::to_string(here) + " has no buffer " + std::to_string(id) +
                        " (freed, or never allocated there)");
  return it;
}

void buffer_table::free(node_id here, std::uint64_t id, std::uint64_t offset) {
  std::lock_guard lock(m_);
  const auto it = find(id, here);
  if (offset != 0)
    throw session_error("heddle::offload: free of a buffer_ptr " + std::to_string(offset) + " bytes into buffer " +
                        std::to_string(id) + " of node " + std::to_string(here) +
                        ": free the pointer allocate returned");
  buffers_.erase(it);
}

std::byte* buffer_table::span(node_id here, std::uint64_t id, std::uint64_t offset, std::uint64_t bytes,
                              std::shared_ptr<void>* owner) {
  std::lock_guard lock(m_);
  const auto it = find(id, here);
  const std::uint64_t size = it->second.memory.bytes;
  if (offset > size || bytes > size - offset)
    throw session_error("heddle::offload: bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                        ") are outside buffer " + std::to_string(id) + " of node " + std::to_string(here) + " (" +
                        std::to_string(size) + " bytes)");
  if (owner) *owner = it->second.memory.keeper;
  return it->second.memory.data + offset;
}

void buffer_table::clear() {
  std::lock_guard lock(m_);
  buffers_.clear();
}

}  // namespace heddle::am_detail
