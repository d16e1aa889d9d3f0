// SPDX-License-Identifier: Apache-2.0
// How the range algorithms cut a range into pieces, as oneTBB's partitioners do. Pass one by value
// or const& among an algorithm's trailing options: parallel_for(range, body, heddle::simple_partitioner{}).
//
// What each costs (P = the runtime's workers; a piece = one call of the body, one task record):
//   auto_partitioner (the default): about 4P pieces to start with, each halved as long as the range
//     is divisible; a piece that another worker stole (it runs on a worker other than the one that
//     spawned it: an idle worker came looking for work) is split once more when it would otherwise
//     run whole, and so on at every steal. Few pieces when the load is even, more where it is not.
//     A piece not split again (a leaf) calls the body on up to 32 parts of its range, one at a time
//     (oneTBB's range pool): parallel_for offers the largest part not yet run as a task when the
//     worker's deque is empty (at most 5 tasks per leaf), parallel_reduce forks them and takes back
//     what nobody stole. The grain of the range is the floor.
//   simple_partitioner: splits until the range is no longer divisible (down to its grain): about
//     size/grain pieces. The grain is the caller's to choose; with grain 1 a piece per element.
//   static_partitioner: P pieces of equal size (cut in proportion when the range allows it), no
//     further splitting. The least overhead for even loads; no balancing. oneTBB also pins each piece
//     to a thread; heddle's pieces go to whichever worker takes them (see docs/algorithms.md).
#pragma once

#include <type_traits>

namespace heddle {

class auto_partitioner {};
class simple_partitioner {};
class static_partitioner {};

namespace core_detail {

template <class P>
concept partitioner = std::is_same_v<P, auto_partitioner> || std::is_same_v<P, simple_partitioner> ||
    std::is_same_v<P, static_partitioner>;

// The first partitioner type among O..., or Default.
template <class Default, class... O>
struct first_partitioner {
  using type = Default;
};
template <class Default, class O, class... Rest>
struct first_partitioner<Default, O, Rest...> {
  using type = std::conditional_t<partitioner<std::remove_cvref_t<O>>, std::remove_cvref_t<O>,
                                  typename first_partitioner<Default, Rest...>::type>;
};
template <class Default, class... O>
using partitioner_of = typename first_partitioner<Default, O...>::type;

}  // namespace core_detail

}  // namespace heddle
