// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_reduce and heddle::parallel_deterministic_reduce, oneTBB's functional forms:
//
//   T parallel_reduce(range, identity, body, join[, options...])
//   T parallel_deterministic_reduce(range, identity, body, join[, options...])
//   each also as X(heddle::runtime& rt, ...) to run on rt
//
//   body(const Range& piece, T acc) -> T   acc combined with every element of piece, in order
//   join(T left, T right) -> T             left's elements all come before right's
// (body and join may take const T& or T& instead: values are passed as rvalues where the callable
// takes them so, else as lvalues, as std::reduce and oneTBB pass them). Returns identity for an
// empty range, without calling body. join must be associative and identity its identity; nothing
// needs to be commutative: pieces are joined in range order.
//
// parallel_reduce: options are a cancellation_token and a partitioner (auto_partitioner by default).
// A piece whose upper part nobody stole goes on with its own accumulator over that part, as oneTBB's
// bodies do, so the number of joins and identity copies, and with floating point the result, depends
// on timing.
// parallel_deterministic_reduce: options are a cancellation_token and simple_partitioner (the default)
// or static_partitioner. The split tree depends only on the range and its grain (simple) or on the
// range and the runtime's worker count (static); every leaf starts from a copy of identity and every
// split is joined, in the tree's order. So the result is the same, bit for bit, in every run, and
// with simple_partitioner for every number of workers.
//
// Cost: no allocation. The pieces fork on the stack (detail/fork.hpp): a split pushes a record (a
// 48-byte future header, the context and the forked work's captures: about 100 bytes) that lives in
// the splitting piece's frame, with the slot for its result; the piece joins it
// before returning (popping it back when nobody stole it; helping the thief when somebody did).
// Per piece: one body call; per stolen piece (all pieces, deterministic): one copy of identity and
// one join. Values move, they are never copied except from identity. T needs a copy constructor (for
// identity) and a move constructor, not a default constructor or assignment.
//
// Throws: the first exception thrown by body, join or a copy of identity (the other pieces stop at
// their next split or leaf); heddle::task_cancelled if the token was cancelled before or during the
// call.
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// body and join are called concurrently, on the workers (and the caller, when it is one). Blocks until done: a worker
// of the runtime runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "heddle/algorithm/detail/call.hpp"
#include "heddle/algorithm/detail/fork.hpp"
#include "heddle/algorithm/detail/options.hpp"
#include "heddle/algorithm/detail/partition.hpp"
#include "heddle/algorithm/detail/reduce_tree.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/algorithm/split.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

template <class O>
concept deterministic_option = one_of_options<O, cancellation_token, simple_partitioner, static_partitioner>;

template <class Range, class T, class Body, class Join>
concept reduction = splittable_range<Range> && std::copy_constructible<T> &&
    callable_moving_or_lvalues<Body, const Range&, T> &&
    std::convertible_to<moving_or_lvalues_result_t<Body, const Range&, T>, T> &&
    callable_moving_or_lvalues<Join, T, T> && std::convertible_to<moving_or_lvalues_result_t<Join, T, T>, T>;

template <class P, bool Deterministic, class Range, class T, class Body, class Join>
T run_reduce(runtime* rt, const cancellation_token& token, const char* what, const Range& range, const T& identity,
             const Body& body, const Join& join) {
  if (range.empty() && !token.cancelled()) return identity;
  std::optional<T> result;
  run_algorithm(rt, token, what, [&](task_group& g) {
    tree_context ctx(g);
    reduce_tree<Deterministic, Range, T, Body, Join> tree(ctx, identity, body, join);
    Range r(range);
    tree.run(r, root_piece<P>(), T(identity), result);
    ctx.rethrow_if_failed();
  });
  if (!result) throw task_cancelled(std::string(what) + ": cancelled");  // stopped, and no error to report
  return std::move(*result);
}

}  // namespace core_detail

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class Range, class T, class Body, class Join, core_detail::range_option... O>
  requires core_detail::reduction<Range, T, Body, Join>
T parallel_reduce(const Range& range, const T& identity, const Body& body, const Join& join, const O&... options) {
  return core_detail::run_reduce<core_detail::partitioner_of<auto_partitioner, O...>, false>(
      nullptr, core_detail::token_of(options...), "heddle::parallel_reduce", range, identity, body, join);
}
template <class Range, class T, class Body, class Join, core_detail::range_option... O>
  requires core_detail::reduction<Range, T, Body, Join>
T parallel_reduce(runtime& rt, const Range& range, const T& identity, const Body& body, const Join& join,
                  const O&... options) {
  return core_detail::run_reduce<core_detail::partitioner_of<auto_partitioner, O...>, false>(
      &rt, core_detail::token_of(options...), "heddle::parallel_reduce", range, identity, body, join);
}

template <class Range, class T, class Body, class Join, core_detail::deterministic_option... O>
  requires core_detail::reduction<Range, T, Body, Join>
T parallel_deterministic_reduce(const Range& range, const T& identity, const Body& body, const Join& join,
                                const O&... options) {
  return core_detail::run_reduce<core_detail::partitioner_of<simple_partitioner, O...>, true>(
      nullptr, core_detail::token_of(options...), "heddle::parallel_deterministic_reduce", range, identity, body,
      join);
}
template <class Range, class T, class Body, class Join, core_detail::deterministic_option... O>
  requires core_detail::reduction<Range, T, Body, Join>
T parallel_deterministic_reduce(runtime& rt, const Range& range, const T& identity, const Body& body,
                                const Join& join, const O&... options) {
  return core_detail::run_reduce<core_detail::partitioner_of<simple_partitioner, O...>, true>(
      &rt, core_detail::token_of(options...), "heddle::parallel_deterministic_reduce", range, identity, body, join);
}
// clang-format on

}  // namespace heddle
