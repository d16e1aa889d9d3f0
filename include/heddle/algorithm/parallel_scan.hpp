// SPDX-License-Identifier: Apache-2.0
// heddle's prefix scans: std's spelling for sequences, oneTBB's functional parallel_scan for ranges.
//
//   Out inclusive_scan(first, last, out[, op[, init]][, token])    out[i] = in[0] op ... op in[i]
//                                                                   (init op in[0] op ... with init)
//   Out exclusive_scan(first, last, out, init[, op][, token])      out[i] = init op in[0] op ... op in[i-1]
//   T   parallel_scan(range, identity, scan, join[, options...])
//   each also as X(heddle::runtime& rt, ...) to run on rt
//
// The sequence forms take random-access iterators; out may equal first (in place); op defaults to
// std::plus<>. They return out + (last - first). The accumulator's type is the input's value type
// (inclusive_scan without init) or init's type, as in std. op is assumed associative only (never
// commutative): results combine in sequence order, but grouped differently than a serial loop, so
// a floating-point scan may differ from std::inclusive_scan in the last bits (as std's parallel
// overloads may). op, scan and join get the accumulator moved in where they take an rvalue, else
// as an lvalue, as std's scans pass it: a callable written [](auto& a, auto& b) works.
//
// parallel_scan: oneTBB's functional form. scan(const Range& r, T sum, bool is_final_scan) -> T
// returns sum combined with r's elements, and when is_final_scan also writes r's results (sum is
// then everything before r); join(T left, T right) -> T. Returns the total. Options: a
// cancellation_token and a partitioner (auto, the default, and static cut the range into about 4
// and 1 tiles per worker; simple cuts it down to its grain).
//
// Algorithm (detail/scan_tiles.hpp): the input is cut into tiles, about 4 per worker. Pass 1 scans
// for good every tile whose carry-in is known when it starts (tile 0, and each tile that starts
// after all those before it were scanned) and only reduces the others to their totals; their
// carries are then combined serially, and pass 2 scans them. A reduced tile is read twice. The
// sequence forms go through the input in blocks of such tiles, each tile a quarter MiB of input
// (at least 4096 elements), so that pass 2 finds its tiles still in cache: memory traffic stays
// about the serial scan's 2n. With one worker they make a single pass, as the serial scan.
// parallel_scan's tiles span the whole range (about 4 per worker, or down to the grain with
// simple_partitioner): its body may not be split at will.
// Cost: per block, two fork-join passes over its tiles (a record of about 100 bytes on the stack per split, no
// task record from the magazine) and three vectors of K elements.
//
// Throws: the first exception thrown by op / scan / join or a copy of T; heddle::task_cancelled if
// the token was cancelled before or during the call (out is then partly written).
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one included: calls nest).
// op, scan and join are called concurrently, on the workers (and the caller, when it is one). Blocks until done: a
// worker of the runtime runs the pieces and other tasks meanwhile, any other thread sleeps.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/algorithm/detail/call.hpp"
#include "heddle/algorithm/detail/fork.hpp"
#include "heddle/algorithm/detail/options.hpp"
#include "heddle/algorithm/detail/partition.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/detail/scan_tiles.hpp"
#include "heddle/algorithm/partitioner.hpp"
#include "heddle/algorithm/split.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle {

namespace core_detail {

inline constexpr std::size_t scan_tiles_per_worker = 4;
inline constexpr std::size_t scan_min_tile = 4096;
inline constexpr std::size_t scan_tile_bytes = 256 * 1024;

// The sequence scans' kernel (scan_tiles.hpp). `init` empty: inclusive_scan without an initial value.
template <bool Exclusive, class In, class Out, class T, class Op>
struct sequence_scan {
  In in;
  Out out;
  std::size_t n, tiles;
  const Op& op;
  const std::optional<T>& init;

  std::size_t begin_of(std::size_t i) const { return n / tiles * i + std::min(i, n % tiles); }

  T first() {
    if (init) return scan(0, T(*init));
    // inclusive, no initial value: the first element starts the accumulator
    T acc(in[0]);
    out[0] = acc;
    return scan_from(1, begin_of(1), std::move(acc));
  }
  T reduce(std::size_t i) {
    std::size_t j = begin_of(i);
    const std::size_t e = begin_of(i + 1);
    T acc(in[j]);
    for (++j; j < e; ++j) acc = call_moving_or_lvalues(op, std::move(acc), in[j]);
    return acc;
  }
  T final(std::size_t i, T carry) { return scan(i, std::move(carry)); }
  T combine(T a, T b) const { return call_moving_or_lvalues(op, std::move(a), std::move(b)); }

  T scan(std::size_t i, T acc) { return scan_from(begin_of(i), begin_of(i + 1), std::move(acc)); }
  T scan_from(std::size_t j, std::size_t e, T acc) {
    for (; j < e; ++j) {
      if constexpr (Exclusive) {
        T v(in[j]);  // read before writing: out may be in
        out[j] = acc;
        acc = call_moving_or_lvalues(op, std::move(acc), std::move(v));
      } else {
        acc = call_moving_or_lvalues(op, std::move(acc), in[j]);
        out[j] = acc;
      }
    }
    return acc;
  }
};

template <bool Exclusive, class T, class In, class Out, class Op>
Out run_sequence_scan(runtime* rt, const cancellation_token& token, const char* what, In first, In last, Out out,
                      const Op& op, const std::optional<T>& init) {
  const auto count = last - first;
  if (count <= 0) {
    if (token.cancelled()) throw task_cancelled(std::string(what) + ": cancelled before it started");
    return out;
  }
  const auto n = static_cast<std::size_t>(count);
  std::optional<T> all;
  run_algorithm(rt, token, what, [&](task_group& g) {
    tree_context ctx(g);
    const std::size_t workers = current_concurrency();
    if (workers <= 1 || n < 2 * scan_min_tile) {
      sequence_scan<Exclusive, In, Out, T, Op> k{first, out, n, 1, op, init};
      all = scan_tiles<T>(ctx, 1, k);
    } else {
      // Blocks of a few tiles per worker, each tile a quarter MiB of input: the tiles a block's first
      // pass reduces are still in cache when its second pass scans them.
      const std::size_t tile = std::max(scan_min_tile, scan_tile_bytes / sizeof(T));
      const std::size_t per_block = scan_tiles_per_worker * workers;
      std::optional<T> carry = init;
      for (std::size_t b = 0; b < n && !ctx.stopping(); b += tile * per_block) {
        const std::size_t len = std::min(tile * per_block, n - b);
        const std::size_t tiles = std::clamp<std::size_t>(len / tile, 1, per_block);
        sequence_scan<Exclusive, In, Out, T, Op> k{
            first + static_cast<std::ptrdiff_t>(b), out + static_cast<std::ptrdiff_t>(b), len, tiles, op, carry};
        std::optional<T> through = scan_tiles<T>(ctx, tiles, k);
        if (!through) break;
        carry.reset();
        carry.emplace(std::move(*through));
      }
      if (!ctx.stopping()) all = std::move(carry);
    }
    ctx.rethrow_if_failed();
  });
  if (!all) throw task_cancelled(std::string(what) + ": cancelled");
  return out + count;
}

// parallel_scan's kernel over a list of pieces of the range.
template <class Range, class T, class Scan, class Join>
struct range_scan {
  std::vector<Range>& pieces;
  const T& identity;
  const Scan& scan;
  const Join& join;
  T first() { return scan(std::as_const(pieces[0]), identity, true); }
  T reduce(std::size_t i) { return scan(std::as_const(pieces[i]), identity, false); }
  T final(std::size_t i, T carry) {
    return call_moving_or_lvalues(scan, std::as_const(pieces[i]), std::move(carry), true);
  }
  T combine(T a, T b) const { return call_moving_or_lvalues(join, std::move(a), std::move(b)); }
};

// Cuts r into pieces, in order, as the partitioner's piece state says.
template <class Range, class Piece>
void cut_in_order(Range r, Piece s, std::vector<Range>& pieces) {
  while (s.wants_split(r)) {
    Piece rs = s;
    Range right = s.split_off(r, rs);
    cut_in_order(std::move(r), s, pieces);
    r = std::move(right);
    s = rs;
  }
  pieces.push_back(std::move(r));
}

template <class P, class Range, class T, class Scan, class Join>
T run_range_scan(runtime* rt, const cancellation_token& token, const Range& range, const T& identity, const Scan& scan,
                 const Join& join) {
  const char* what = "heddle::parallel_scan";
  if (range.empty() && !token.cancelled()) return identity;
  std::optional<T> all;
  run_algorithm(rt, token, what, [&](task_group& g) {
    tree_context ctx(g);
    std::vector<Range> pieces;
    const std::size_t workers = current_concurrency();
    if constexpr (std::is_same_v<P, simple_partitioner>) cut_in_order(range, simple_piece{}, pieces);
    else if (workers <= 1) pieces.push_back(range);
    else
      cut_in_order(range, static_piece{(std::is_same_v<P, static_partitioner> ? 1 : scan_tiles_per_worker) * workers},
                   pieces);
    range_scan<Range, T, Scan, Join> k{pieces, identity, scan, join};
    all = scan_tiles<T>(ctx, pieces.size(), k);
    ctx.rethrow_if_failed();
  });
  if (!all) throw task_cancelled(std::string(what) + ": cancelled");
  return std::move(*all);
}

template <class O>
concept scan_op_argument = !token_option<O> && !std::is_same_v<std::remove_cvref_t<O>, runtime>;

}  // namespace core_detail

// inclusive_scan(first, last, out[, op][, token])
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::token_option... O>
Out inclusive_scan(In first, In last, Out out, const O&... options) {
  using T = std::iter_value_t<In>;
  return core_detail::run_sequence_scan<false, T>(nullptr, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, std::plus<>{}, std::optional<T>{});
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument Op,
          core_detail::token_option... O>
Out inclusive_scan(In first, In last, Out out, const Op& op, const O&... options) {
  using T = std::iter_value_t<In>;
  return core_detail::run_sequence_scan<false, T>(nullptr, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, op, std::optional<T>{});
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument Op,
          core_detail::scan_op_argument T, core_detail::token_option... O>
Out inclusive_scan(In first, In last, Out out, const Op& op, T init, const O&... options) {
  return core_detail::run_sequence_scan<false, T>(nullptr, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, op, std::optional<T>(std::move(init)));
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::token_option... O>
Out inclusive_scan(runtime& rt, In first, In last, Out out, const O&... options) {
  using T = std::iter_value_t<In>;
  return core_detail::run_sequence_scan<false, T>(&rt, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, std::plus<>{}, std::optional<T>{});
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument Op,
          core_detail::token_option... O>
Out inclusive_scan(runtime& rt, In first, In last, Out out, const Op& op, const O&... options) {
  using T = std::iter_value_t<In>;
  return core_detail::run_sequence_scan<false, T>(&rt, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, op, std::optional<T>{});
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument Op,
          core_detail::scan_op_argument T, core_detail::token_option... O>
Out inclusive_scan(runtime& rt, In first, In last, Out out, const Op& op, T init, const O&... options) {
  return core_detail::run_sequence_scan<false, T>(&rt, core_detail::token_of(options...), "heddle::inclusive_scan",
                                                  first, last, out, op, std::optional<T>(std::move(init)));
}

// exclusive_scan(first, last, out, init[, op][, token])
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument T,
          core_detail::token_option... O>
Out exclusive_scan(In first, In last, Out out, T init, const O&... options) {
  return core_detail::run_sequence_scan<true, T>(nullptr, core_detail::token_of(options...), "heddle::exclusive_scan",
                                                 first, last, out, std::plus<>{}, std::optional<T>(std::move(init)));
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument T,
          core_detail::scan_op_argument Op, core_detail::token_option... O>
Out exclusive_scan(In first, In last, Out out, T init, const Op& op, const O&... options) {
  return core_detail::run_sequence_scan<true, T>(nullptr, core_detail::token_of(options...), "heddle::exclusive_scan",
                                                 first, last, out, op, std::optional<T>(std::move(init)));
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument T,
          core_detail::token_option... O>
Out exclusive_scan(runtime& rt, In first, In last, Out out, T init, const O&... options) {
  return core_detail::run_sequence_scan<true, T>(&rt, core_detail::token_of(options...), "heddle::exclusive_scan",
                                                 first, last, out, std::plus<>{}, std::optional<T>(std::move(init)));
}
template <std::random_access_iterator In, std::random_access_iterator Out, core_detail::scan_op_argument T,
          core_detail::scan_op_argument Op, core_detail::token_option... O>
Out exclusive_scan(runtime& rt, In first, In last, Out out, T init, const Op& op, const O&... options) {
  return core_detail::run_sequence_scan<true, T>(&rt, core_detail::token_of(options...), "heddle::exclusive_scan",
                                                 first, last, out, op, std::optional<T>(std::move(init)));
}

// parallel_scan(range, identity, scan, join[, options...]): oneTBB's functional form.
namespace core_detail {
// scan gets identity (a const T&) or a carried sum (moved in, or an lvalue); join two sums.
template <class Range, class T, class Scan, class Join>
concept range_scan_callables =
    std::convertible_to<std::invoke_result_t<const Scan&, const Range&, const T&, bool>, T> &&
    callable_moving_or_lvalues<Scan, const Range&, T, bool> &&
    std::convertible_to<moving_or_lvalues_result_t<Scan, const Range&, T, bool>, T> &&
    callable_moving_or_lvalues<Join, T, T> && std::convertible_to<moving_or_lvalues_result_t<Join, T, T>, T>;
}  // namespace core_detail

// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <core_detail::splittable_range Range, class T, class Scan, class Join, core_detail::range_option... O>
  requires core_detail::range_scan_callables<Range, T, Scan, Join>
T parallel_scan(const Range& range, const T& identity, const Scan& scan, const Join& join, const O&... options) {
  return core_detail::run_range_scan<core_detail::partitioner_of<auto_partitioner, O...>>(
      nullptr, core_detail::token_of(options...), range, identity, scan, join);
}
template <core_detail::splittable_range Range, class T, class Scan, class Join, core_detail::range_option... O>
  requires core_detail::range_scan_callables<Range, T, Scan, Join>
T parallel_scan(runtime& rt, const Range& range, const T& identity, const Scan& scan, const Join& join,
                const O&... options) {
  return core_detail::run_range_scan<core_detail::partitioner_of<auto_partitioner, O...>>(
      &rt, core_detail::token_of(options...), range, identity, scan, join);
}
// clang-format on

}  // namespace heddle
