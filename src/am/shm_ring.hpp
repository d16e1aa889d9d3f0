// SPDX-License-Identifier: Apache-2.0
// One direction between two processes: a ring of 64-byte cells in the receiver's segment, written
// by one sender process and read by the receiver (HAM's write-then-flag protocol, over shared
// memory instead of SCIF).
//
// A record is a run of cells: the first starts with its stamp (the record's position + 1, written
// last, with release), its length in cells and its kind (a frame, or padding to the ring's end);
// then the frame's 32-byte header and its payload. The receiver polls the stamp at its position:
// the frame's bytes share the stamp's cache line, so a small call crosses with one line transfer.
// The first word of a cell not yet written in the current lap is 0 or an earlier lap's stamp for
// that cell, never the stamp the receiver waits for there: the receiver zeroes the first word of
// every cell that held payload (a record's cells after its first) when it consumes the record, and
// leaves a first cell's stamp (always lower than any later one for the cell), so a one-cell record
// is only read by the receiver. Then it publishes its position (`tail`), from which the sender
// knows the free space.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "heddle/am/message.hpp"

namespace heddle::am_detail {

struct ring_cell {
  static constexpr std::size_t bytes = 64;
  static constexpr std::size_t prefix = 16;  // stamp, cells, kind
  static constexpr std::uint32_t frame = 1, padding = 2;
};
static_assert(ring_cell::prefix + message_header::size <= ring_cell::bytes,
              "a frame's header shares its stamp's cell: a small call crosses in one cache line");

// In shared memory: the consumer's position, then the cells.
struct ring_control {
  alignas(64) std::atomic<std::uint64_t> tail;  // cells consumed, ever
  char pad[56];
};
static_assert(sizeof(ring_control) == 64);

// `count` cells, a power of two: a position becomes a cell with a mask, not a division (three
// divisions a frame on each side cost a few tens of ns).
class ring_view {
 public:
  ring_view() = default;
  ring_view(ring_control* c, std::byte* cells, std::uint64_t count) noexcept
      : control_(c), cells_(cells), count_(count) {}

  std::uint64_t cells() const noexcept { return count_; }
  // The cell of position `pos` counted from the ring's start.
  std::uint64_t index(std::uint64_t pos) const noexcept { return pos & (count_ - 1); }
  std::byte* cell(std::uint64_t pos) const noexcept { return cells_ + index(pos) * ring_cell::bytes; }
  ring_control& control() const noexcept { return *control_; }

  static std::atomic_ref<std::uint64_t> stamp(std::byte* c) noexcept {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(c));
  }
  static std::uint32_t length(const std::byte* c) noexcept {
    std::uint32_t n;
    std::memcpy(&n, c + 8, 4);
    return n;
  }
  static std::uint32_t kind(const std::byte* c) noexcept {
    std::uint32_t k;
    std::memcpy(&k, c + 12, 4);
    return k;
  }
  static void set_length_and_kind(std::byte* c, std::uint32_t n, std::uint32_t k) noexcept {
    std::memcpy(c + 8, &n, 4);
    std::memcpy(c + 12, &k, 4);
  }

 private:
  ring_control* control_ = nullptr;
  std::byte* cells_ = nullptr;
  std::uint64_t count_ = 0;
};

}  // namespace heddle::am_detail
