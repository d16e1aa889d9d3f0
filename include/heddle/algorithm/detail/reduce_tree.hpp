// SPDX-License-Identifier: Apache-2.0
// The split tree of parallel_reduce and parallel_deterministic_reduce (heddle/algorithm/
// parallel_reduce.hpp), on the stack of the pieces (fork.hpp).
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include "heddle/algorithm/detail/call.hpp"
#include "heddle/algorithm/detail/fork.hpp"
#include "heddle/algorithm/detail/partition.hpp"
#include "heddle/algorithm/split.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::core_detail {

// Deterministic: every split joins, in tree order, and every leaf starts from a copy of the
// identity, so the result depends only on the split tree. Otherwise a piece whose upper part was
// not stolen goes on accumulating over it (no identity copy, no join), as oneTBB's bodies do.
template <bool Deterministic, class Range, class T, class Body, class Join>
class reduce_tree {
 public:
  reduce_tree(tree_context& ctx, const T& identity, const Body& body, const Join& join) noexcept
      : ctx_(ctx), identity_(identity), body_(body), join_(join) {}

  // A piece that starts on a worker: out gets acc accumulated over r, or stays empty when the tree
  // stopped (a failure, recorded in the context, or a cancellation).
  template <class Piece>
  void run(Range& r, Piece s, T&& acc, std::optional<T>& out) noexcept {
    s.start();
    go(r, s, std::move(acc), out);
  }

 private:
  // Deterministic trees never cut leaves by timing; auto_partitioner is not allowed there anyway.
  template <class Piece>
  static constexpr bool subdivides = !Deterministic && subdividing_piece<Piece, Range>;
  template <class Piece>
  static bool subdivision_wanted(const Piece& s, const Range& r) {
    if constexpr (subdivides<Piece>) return s.wants_subdivision(r);
    else return false;
  }
  template <class Piece>
  static Range subdivide(Piece& s, Range& r, Piece& rs) {
    if constexpr (subdivides<Piece>) return s.subdivide(r, rs);
    else return Range(r, split{});  // never called
  }

  template <class Piece>
  void go(Range& r, Piece& s, T&& acc, std::optional<T>& out) noexcept {
    if (ctx_.stopping()) return;
    std::optional<Range> right;
    Piece rs = s;
    try {
      if (s.wants_split(r)) {
        right.emplace(s.split_off(r, rs));
      } else if (subdivides<Piece> && subdivision_wanted(s, r)) {
        // A leaf cut further: forked like a split; when nobody steals the upper half it is taken back
        // below and accumulated into the same value, so the cut costs a push and a pop.
        right.emplace(subdivide(s, r, rs));
      } else {
        out.emplace(call_moving_or_lvalues(body_, std::as_const(r), std::move(acc)));
        return;
      }
    } catch (...) {
      ctx_.fail(std::current_exception());
      return;
    }
    // From here to the join nothing may throw: the forked record and its slot live in this frame.
    std::optional<T> right_value;
    auto work = [this, &right, rs, &right_value]() noexcept {
      try {
        run(*right, rs, T(identity_), right_value);
      } catch (...) {  // the identity's copy threw
        ctx_.fail(std::current_exception());
      }
    };
    worker* w = current_worker;
    forked<decltype(work)> child(ctx_, std::move(work));
    child.fork(w);
    std::optional<T> left;
    go(r, s, std::move(acc), left);
    if constexpr (!Deterministic) {
      if (child.take_back(w)) {  // not stolen: keep accumulating, as if the range had not been split
        if (left) go(*right, rs, std::move(*left), out);
        return;
      }
    }
    child.join();
    if (!left || !right_value) return;
    try {
      out.emplace(call_moving_or_lvalues(join_, std::move(*left), std::move(*right_value)));
    } catch (...) {
      ctx_.fail(std::current_exception());
    }
  }

  tree_context& ctx_;
  const T& identity_;
  const Body& body_;
  const Join& join_;
};

}  // namespace heddle::core_detail
