// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_for, as tbb::parallel_for: a body over the pieces of a range, or a function over
// every index of an interval, in parallel.
//
//   parallel_for(range, body[, options...])          body(const Range&) for pieces covering range
//   parallel_for(first, last, f[, grain][, options...])   f(i) for every i in [first, last)
//   parallel_for(first, last, step, f[, options...])      f(first), f(first + step), ... (< last)
//   each also as parallel_for(heddle::runtime& rt, ...)  to run on rt rather than the caller's runtime
//
// options: a heddle::cancellation_token and/or a partitioner (auto_partitioner by default for the
// range form; partitioner.hpp), in any order.
//
// Cost: the pieces are spawned as tasks of one task_group: one task record (a 128-byte block from
// the worker's magazine, no allocator call) per piece but the first, which the calling worker runs
// itself; nobody waits for a piece except the root, which waits for all (pieces spawn their upper
// halves and keep their lower ones, so thieves take the largest pieces). See partitioner.hpp for
// how many pieces each partitioner makes. Called from a thread outside the runtime, one more task
// carries the root and the caller sleeps.
//
// Throws: the first exception a body threw (pieces not yet started are skipped, running ones
// finish); heddle::task_cancelled if the token was cancelled before or during the call (some of the
// range may then have been processed); std::invalid_argument for a step <= 0.
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// The body is called concurrently, on the workers (and the caller, when it is one). Blocks until done: a worker of the
// runtime runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "heddle/algorithm/blocked_range.hpp"
#include "heddle/algorithm/detail/call.hpp"
#include "heddle/algorithm/detail/options.hpp"
#include "heddle/algorithm/detail/partition.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/algorithm/split.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

// Runs one piece: spawns the upper part as long as the partitioner wants a split, then the body on
// what is left.
template <class Range, class Piece, class Body>
void for_piece(task_group& g, Range r, Piece s, const Body& body);

// A leaf of auto_partitioner, cut into a pool of parts as oneTBB's range pool: the body runs on the
// lowest part, the upper parts wait here (largest first), and the largest is offered as a task
// whenever this worker's deque is empty, i.e. when a worker that runs out of work would find
// nothing of ours to steal. A part nobody takes is run here, by the next turn of the loop or, once
// offered, by this worker's own scheduler. At most leaf_depth + 1 body calls and leaf_depth tasks.
template <class Range, class Piece, class Body>
void for_leaf(task_group& g, Range r, Piece s, const Body& body) {
  struct part {
    Range r;
    Piece s;
  };
  std::optional<part> pool[Piece::leaf_depth];
  std::size_t waiting = 0;
  std::optional<part> now(std::in_place, part{std::move(r), s});
  worker* w = current_worker;
  for (;;) {
    while (waiting < Piece::leaf_depth && now->s.wants_subdivision(now->r)) {
      Piece rs = now->s;
      Range upper = now->s.subdivide(now->r, rs);
      pool[waiting++].emplace(part{std::move(upper), rs});
    }
    if (waiting > 0 && w->deque.looks_empty()) {
      part offered = std::move(*pool[0]);
      for (std::size_t i = 1; i < waiting; ++i) {  // reset and emplace: a range need not be assignable
        pool[i - 1].reset();
        pool[i - 1].emplace(std::move(*pool[i]));
      }
      pool[--waiting].reset();
      g.run([&g, offered = std::move(offered), &body]() mutable {
        for_piece(g, std::move(offered.r), offered.s, body);
      });
    }
    if (g.is_cancelling()) return;
    body(std::as_const(now->r));
    if (waiting == 0) return;
    now.reset();
    now.emplace(std::move(*pool[waiting - 1]));
    pool[--waiting].reset();
  }
}

template <class Range, class Piece, class Body>
void for_piece(task_group& g, Range r, Piece s, const Body& body) {
  s.start();
  while (s.wants_split(r)) {
    if (g.is_cancelling()) return;
    Piece rs = s;
    Range right = s.split_off(r, rs);
    g.run([&g, right = std::move(right), rs, &body]() mutable { for_piece(g, std::move(right), rs, body); });
  }
  if constexpr (subdividing_piece<Piece, Range>) {
    if (s.wants_subdivision(r)) return for_leaf(g, std::move(r), s, body);
  }
  if (!g.is_cancelling()) body(std::as_const(r));
}

template <class Partitioner, class Range, class Body>
void run_for(runtime* rt, const cancellation_token& token, const char* what, const Range& range, const Body& body) {
  if (range.empty() && !token.cancelled()) return;
  run_algorithm(rt, token, what, [&](task_group& g) { for_piece(g, range, root_piece<Partitioner>(), body); });
}

// Calls f on a copy of the loop's index: as an rvalue when f takes one, else as an lvalue, as
// oneTBB's index form passes it, so [](auto& i) compiles and cannot move the loop itself.
template <class F, class index>
void call_index(const F& f, index i) {
  call_moving_or_lvalues(f, std::move(i));
}

// The index forms: [lo, hi) of `index`: cut as oneTBB's index form cuts it (auto_partitioner, grain
// 1) when neither a grain nor a partitioner is given, in pieces of at most `grain` iterations when
// one is, by the partitioner named otherwise.
template <class index, class F, class... O>
void run_index_for(runtime* rt, index lo, index hi, std::size_t grain, const F& f, const O&... options) {
  const cancellation_token token = token_of(options...);
  if (!(lo < hi) && !token.cancelled()) return;
  using named = partitioner_of<void, O...>;
  if constexpr (!std::is_void_v<named>) {
    auto body = [&f](const blocked_range<index>& r) {
      for (index i = r.begin(); i != r.end(); ++i) call_index(f, i);
    };
    run_for<named>(rt, token, "heddle::parallel_for", blocked_range<index>(lo, hi, grain), body);
  } else {
    // Checks the group at every index: a loop of many cheap iterations is the index form's use.
    // (The body outlives the root, which returns before the pieces finish: it lives here.)
    const task_group* group = nullptr;
    auto checked = [&group, &f](const blocked_range<index>& r) {
      for (index i = r.begin(); i != r.end() && !group->is_cancelling(); ++i) call_index(f, i);
    };
    run_algorithm(rt, token, "heddle::parallel_for", [&](task_group& g) {
      group = &g;
      if (grain == 0) for_piece(g, blocked_range<index>(lo, hi), root_piece<auto_partitioner>(), checked);
      else for_piece(g, blocked_range<index>(lo, hi, grain), simple_piece{}, checked);
    });
  }
}

template <class I, class S, class F, class... O>
void run_step_for(runtime* rt, I first, I last, S step, const F& f, const O&... options) {
  if (!(step > 0)) throw std::invalid_argument("heddle::parallel_for: the step must be positive");
  using U = std::make_unsigned_t<I>;
  const U span = first < last ? static_cast<U>(static_cast<U>(last) - static_cast<U>(first)) : U{0};
  const U n = span == 0 ? U{0} : static_cast<U>((span - 1) / static_cast<U>(step) + 1);
  auto at = [first, step, &f](U k) { call_index(f, static_cast<I>(static_cast<U>(first) + k * static_cast<U>(step))); };
  run_index_for(rt, U{0}, n, 0, at, options...);
}

}  // namespace core_detail

// Calls body(piece) for pieces that together cover `range` exactly once, in parallel, and returns
// when every call has returned. Never calls body with an empty range. Thread-safe; blocks until done.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <core_detail::splittable_range Range, class Body, core_detail::range_option... O>
  requires std::invocable<const Body&, const Range&>
void parallel_for(const Range& range, const Body& body, const O&... options) {
  core_detail::run_for<core_detail::partitioner_of<auto_partitioner, O...>>(
      nullptr, core_detail::token_of(options...), "heddle::parallel_for", range, body);
}
template <core_detail::splittable_range Range, class Body, core_detail::range_option... O>
  requires std::invocable<const Body&, const Range&>
void parallel_for(runtime& rt, const Range& range, const Body& body, const O&... options) {
  core_detail::run_for<core_detail::partitioner_of<auto_partitioner, O...>>(
      &rt, core_detail::token_of(options...), "heddle::parallel_for", range, body);
}

// Calls f(i) for each i in [first, last) (of their common type) in parallel and returns when all
// calls have returned. f takes i by value, by const or non-const reference (a copy of the loop's
// index, as oneTBB passes it) or as an rvalue. `grain`: the most iterations one task runs; 0 (and
// the forms without one) cuts the interval as oneTBB's index form does, with auto_partitioner: a
// few pieces per worker, split further where a worker runs out of work. With a partitioner among
// the options, the interval is a blocked_range with that grain (0 counts as 1) cut by that
// partitioner instead. Without one, it checks for cancellation at every index. Thread-safe; blocks
// until done.
template <std::integral I, std::integral J, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, std::common_type_t<I, J>>
void parallel_for(I first, J last, F&& f, std::size_t grain, const O&... options) {
  using index = std::common_type_t<I, J>;
  core_detail::run_index_for(nullptr, static_cast<index>(first), static_cast<index>(last), grain, f, options...);
}
template <std::integral I, std::integral J, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, std::common_type_t<I, J>>
void parallel_for(I first, J last, F&& f, const O&... options) {
  using index = std::common_type_t<I, J>;
  core_detail::run_index_for(nullptr, static_cast<index>(first), static_cast<index>(last), 0, f, options...);
}
template <std::integral I, std::integral J, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, std::common_type_t<I, J>>
void parallel_for(runtime& rt, I first, J last, F&& f, std::size_t grain, const O&... options) {
  using index = std::common_type_t<I, J>;
  core_detail::run_index_for(&rt, static_cast<index>(first), static_cast<index>(last), grain, f, options...);
}
template <std::integral I, std::integral J, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, std::common_type_t<I, J>>
void parallel_for(runtime& rt, I first, J last, F&& f, const O&... options) {
  using index = std::common_type_t<I, J>;
  core_detail::run_index_for(&rt, static_cast<index>(first), static_cast<index>(last), 0, f, options...);
}

// Calls f(first + k * step) for every k with first + k * step < last, in parallel (oneTBB's
// parallel_for(first, last, step, f)). Throws std::invalid_argument when step <= 0.
template <std::integral I, std::integral S, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, I>
void parallel_for(I first, I last, S step, F&& f, const O&... options) {
  core_detail::run_step_for(nullptr, first, last, step, f, options...);
}
template <std::integral I, std::integral S, class F, core_detail::range_option... O>
  requires core_detail::callable_moving_or_lvalues<F, I>
void parallel_for(runtime& rt, I first, I last, S step, F&& f, const O&... options) {
  core_detail::run_step_for(&rt, first, last, step, f, options...);
}
// clang-format on

}  // namespace heddle
