// SPDX-License-Identifier: Apache-2.0
// This node's buffers (the memory behind buffer_ptrs of this node): their ids, the transport's
// allocations (a mapped segment on shm, heap memory elsewhere), and on loopback the node that owns
// each.
//
// Why a class of its own: no frame of the call path looks at a buffer. Puts and gets (served by the
// engine, or placed by the transport through frame_sink::place) and the offload API's allocate,
// free and buffer_ptr::get look buffers up here, under this table's own mutex.
//
// Thread safety: every call may be made from any thread; each takes the table's mutex for its
// look-up (the transport's allocation is made outside it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "heddle/am/buffer.hpp"
#include "transport.hpp"

namespace heddle::am_detail {

class buffer_table {
 public:
  // A new buffer of `bytes` bytes owned by node `here`, allocated by `t` (whose exceptions pass
  // through, with nothing recorded). Any thread.
  buffer_ref allocate(transport& t, node_id here, std::uint64_t bytes, std::size_t alignment);
  // Frees buffer `id` of node `here`; session_error if it has none such, or `offset` is not 0 (the
  // pointer allocate returned is freed, not one into the buffer). Any thread.
  void free(node_id here, std::uint64_t id, std::uint64_t offset);
  // [offset, offset + bytes) of buffer `id` of node `here`; session_error naming what is wrong.
  // `owner`, if given, receives what keeps the allocation alive (after a free too). Any thread; the
  // pointer is good until the buffer is freed, or as long as `owner` is kept.
  std::byte* span(node_id here, std::uint64_t id, std::uint64_t offset, std::uint64_t bytes,
                  std::shared_ptr<void>* owner = nullptr);
  // Frees every buffer (the session's end, when no thread polls); memory that an owner keeps stays
  // until it is dropped.
  void clear();

 private:
  struct local_buffer {
    local_allocation memory;
    node_id node;  // the loopback node that owns it (this node elsewhere)
  };
  // The buffer `id` of node `here`, or session_error; m_ held.
  std::unordered_map<std::uint64_t, local_buffer>::iterator find(std::uint64_t id, node_id here);

  std::mutex m_;  // buffers_
  std::unordered_map<std::uint64_t, local_buffer> buffers_;
  std::atomic<std::uint64_t> next_id_{1};
};

}  // namespace heddle::am_detail
