// SPDX-License-Identifier: Apache-2.0
// The splitting decisions of the partitioners (heddle/algorithm/partitioner.hpp): a small state that
// travels with each piece of a range and says whether to split it again.
#pragma once

#include <concepts>
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
// A piece that is not split further (a leaf) is still cut into up to 2^leaf_depth sub-pieces, as
// oneTBB's range pool cuts it: the body runs on one sub-piece at a time, and the parts not yet run
// can be handed to a worker that runs out of work, so that the last leaves do not leave a worker
// idle for a whole leaf's time. How the parts are handed over is the algorithm's
// (parallel_for: offered as tasks when the worker has nothing else to steal; parallel_reduce:
// forked, and taken back when nobody stole them).
// leaf_depth is 4, the depth oneTBB's pools reach: its __TBB_INIT_DEPTH is 5, but its
// auto_partitioner spends one level on the last split of its initial pieces (2 per thread, each
// halved once more: our 4 per worker), so each leaf runs in up to 16 parts (tbb::parallel_for over
// 2^20 indices calls its body 64 times at 1 thread, 128 at 2). One level more made parts half as
// large as oneTBB's: at 2 workers the for2d stencil's 2-D leaves (512 x 4094, grains 4 x 256) were
// cut into 32 x 2047 pieces where oneTBB's are 32 x 4094 (each row read in two halves, apart), and
// a point took about a quarter more time (docs/algorithms.md, "Partitioners").
struct auto_piece {
  static constexpr std::size_t pieces_per_worker = 4;
  static constexpr std::size_t pieces_when_stolen = 2;
  static constexpr unsigned leaf_depth = 4;
  std::size_t pieces;
  unsigned origin;              // the index of the worker that spawned the piece
  unsigned depth = leaf_depth;  // how many more times a leaf may be halved

  static auto_piece root() noexcept {
    return {pieces_per_worker * current_concurrency(), current_worker ? current_worker->index : 0, leaf_depth};
  }
  void start() noexcept {
    const unsigned here = current_worker->index;
    if (here != origin) {
      if (pieces < pieces_when_stolen) pieces = pieces_when_stolen;
      if (depth < leaf_depth) ++depth;  // oneTBB deepens a stolen piece's pool by one level
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
    right.depth = depth;
    pieces -= right.pieces;
    return split_counted(r, pieces, right.pieces);
  }
  // Below a leaf: whether r may be halved again, and the halving (r keeps the lower half).
  template <class R>
  bool wants_subdivision(const R& r) const {
    return depth > 0 && r.is_divisible();
  }
  template <class R>
  R subdivide(R& r, auto_piece& right) {
    --depth;
    right = *this;
    return R(r, split{});
  }
};

// Whether a piece state cuts its leaves further (auto_piece does).
template <class Piece, class R>
concept subdividing_piece = requires(Piece& p, const Piece& cp, R& r) {
  { cp.wants_subdivision(r) } -> std::convertible_to<bool>;
  { p.subdivide(r, p) } -> std::same_as<R>;
};

// The piece state of the root for partitioner P.
template <class P>
auto root_piece() {
  if constexpr (std::is_same_v<P, simple_partitioner>) return simple_piece{};
  else if constexpr (std::is_same_v<P, static_partitioner>) return static_piece{current_concurrency()};
  else return auto_piece::root();
}

}  // namespace heddle::core_detail
