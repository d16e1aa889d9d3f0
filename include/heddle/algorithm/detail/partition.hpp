// The splitting decisions of the partitioners (heddle/algorithm/partitioner.hpp): a small state that
// travels with each piece of a range and says whether to split it again.
#pragma once

#include <cstddef>
#include <type_traits>

#include "heddle/algorithm/partitioner.hpp"
#include "heddle/algorithm/split.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"

namespace heddle::core_detail {

// The number of workers of the calling worker's runtime, or of the default runtime elsewhere.
HEDDLE_EXPORT unsigned current_concurrency();

// simple_partitioner: split while the range is divisible.
struct simple_piece {
  void start() noexcept {}
  template <class R>
  bool wants_split(const R& r) const {
    return r.is_divisible();
  }
  template <class R>
  R split_off(R& r, simple_piece&) {
    return R(r, split{});
  }
};

// Splits r into `left` parts kept and `right` parts returned, in proportion when the range can.
template <class R>
R split_counted(R& r, std::size_t left, std::size_t right) {
  if constexpr (proportionally_splittable<R>) {
    proportional_split p(left, right);
    return R(r, p);
  } else {
    return R(r, split{});
  }
}

// static_partitioner: `pieces` pieces of the range, cut in proportion; never more.
struct static_piece {
  std::size_t pieces;
  void start() noexcept {}
  template <class R>
  bool wants_split(const R& r) const {
    return pieces > 1 && r.is_divisible();
  }
  template <class R>
  R split_off(R& r, static_piece& right) {
    right.pieces = pieces / 2;
    pieces -= right.pieces;
    return split_counted(r, pieces, right.pieces);
  }
};

// auto_partitioner: `pieces` pieces to start with; a piece that runs on another worker than the one
// that spawned it was stolen, which means a worker ran out of work: if it was to run whole, it is
// split in two instead, its upper half offered to the next idle worker, and so on.
struct auto_piece {
  static constexpr std::size_t pieces_per_worker = 4;
  static constexpr std::size_t pieces_when_stolen = 2;
  std::size_t pieces;
  unsigned origin;  // the index of the worker that spawned the piece

  static auto_piece root() noexcept {
    return {pieces_per_worker * current_concurrency(), current_worker ? current_worker->index : 0};
  }
  void start() noexcept {
    const unsigned here = current_worker->index;
    if (here != origin) {
      if (pieces < pieces_when_stolen) pieces = pieces_when_stolen;
      origin = here;
    }
  }
  template <class R>
  bool wants_split(const R& r) const {
    return pieces > 1 && r.is_divisible();
  }
  template <class R>
  R split_off(R& r, auto_piece& right) {
    right.pieces = pieces / 2;
    right.origin = origin;
    pieces -= right.pieces;
    return split_counted(r, pieces, right.pieces);
  }
};

// The piece state of the root for partitioner P.
template <class P>
auto root_piece() {
  if constexpr (std::is_same_v<P, simple_partitioner>) return simple_piece{};
  else if constexpr (std::is_same_v<P, static_partitioner>) return static_piece{current_concurrency()};
  else return auto_piece::root();
}

}  // namespace heddle::core_detail
