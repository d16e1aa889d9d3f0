// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_pipeline, spelled as oneTBB's tbb::parallel_pipeline:
//
//   heddle::parallel_pipeline(16,
//       heddle::make_filter<void, chunk>(heddle::filter_mode::serial_in_order,
//                                        [&](heddle::flow_control& fc) -> chunk {
//                                          chunk c = read_next();
//                                          if (c.empty()) fc.stop();
//                                          return c; })
//     & heddle::make_filter<chunk, chunk>(heddle::filter_mode::parallel, transform)
//     & heddle::make_filter<chunk, void>(heddle::filter_mode::serial_in_order, write));
//
// Beyond oneTBB, a body may return heddle::future<Out> instead of Out (an io::pread, a timer, a
// promise completed by a device or another thread): the item waits for it without holding a thread,
// and the pipeline goes on with its other items meanwhile.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/algorithm/detail/pipeline.hpp"
#include "heddle/algorithm/detail/pipeline_stage.hpp"
#include "heddle/algorithm/detail/run.hpp"
#include "heddle/algorithm/flow_control.hpp"
#include "heddle/core/cancellation.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

template <class In, class Out>
class filter;

namespace core_detail {
inline void run_pipeline(runtime* rt, std::size_t max_tokens, const filter<void, void>& chain,
                         const cancellation_token& token);
}  // namespace core_detail

// A chain of one or more filters that takes In and gives Out (void at the ends of a whole pipeline:
// a complete chain is a filter<void, void>). Copyable; copies share the bodies, which are called
// through const references (as oneTBB calls them), concurrently for a parallel filter.
template <class In, class Out>
class filter {
 public:
  // One filter: `body` is called as Out(flow_control&) when it is the first filter (In = void), as
  // Out(In) otherwise (the item moved in, or as an lvalue to a body taking In&), and may return
  // heddle::future<Out> instead of Out. The body is copied.
  template <class Body>
  filter(filter_mode mode, const Body& body)
      : stages_{std::make_shared<const core_detail::typed_stage<In, Out, Body>>(mode, body)} {}

 private:
  filter() = default;
  template <class, class>
  friend class filter;
  template <class A, class B, class C>
  friend filter<A, C> operator&(const filter<A, B>& l, const filter<B, C>& r);
  friend void core_detail::run_pipeline(runtime*, std::size_t, const filter<void, void>&, const cancellation_token&);

  core_detail::stage_list stages_;  // first to last
};

// oneTBB's make_filter: the filter<In, Out> that calls `body` in `mode`. Thread-safe.
template <class In, class Out, class Body>
filter<In, Out> make_filter(filter_mode mode, const Body& body) {
  return filter<In, Out>(mode, body);
}

// The chain that runs `l`, then `r` on l's results. Thread-safe (the operands are only read).
template <class A, class B, class C>
filter<A, C> operator&(const filter<A, B>& l, const filter<B, C>& r) {
  filter<A, C> chain;
  chain.stages_.reserve(l.stages_.size() + r.stages_.size());
  chain.stages_.insert(chain.stages_.end(), l.stages_.begin(), l.stages_.end());
  chain.stages_.insert(chain.stages_.end(), r.stages_.begin(), r.stages_.end());
  return chain;
}

namespace core_detail {
inline void run_pipeline(runtime* rt, std::size_t max_tokens, const filter<void, void>& chain,
                         const cancellation_token& token) {
  if (max_tokens == 0) throw std::invalid_argument("heddle::parallel_pipeline: max_tokens must be at least 1");
  run_algorithm(rt, token, "heddle::parallel_pipeline", [&](task_group& g) {
    pipeline_run run(g, chain.stages_, max_tokens);
    run.run_to_end();
  });
}
}  // namespace core_detail

// Runs items through `chain` until its first filter calls flow_control::stop(), with at most
// `max_tokens` items in flight at once (each between its first filter's call and the end of its
// last), and returns once every item has left the pipeline.
//
// Guarantees (oneTBB's): a serial filter's body runs for one item at a time; a serial_in_order one
// sees the items in the order the first filter produced them; parallel filters run on several items
// at once. The first filter's body is called one call at a time, whatever its mode (a departure:
// oneTBB may call a parallel input filter concurrently). A body returning a future: the item moves
// on once the future is ready, holding no thread while it waits; for a serial filter, the next
// item's call may start as soon as the body returned, so the futures of one serial filter overlap
// and may complete in any order (a later serial_in_order filter restores the order).
//
// Cost: per item, one schedule of its token per filter it parks at (a gate held by another item, a
// pending future) and no allocation; per call, max_tokens tokens with two value slots each (the
// largest of the filters' output types) and one ring of max_tokens pointers per serial_in_order
// filter. A serial filter's hand-over is a spin lock held for a few loads and stores.
//
// Errors: the first exception thrown by a body (or carried by a body's future) stops the input; the
// items in flight go on through the pipeline without running bodies (their values are destroyed)
// and the exception is rethrown once they have all left. A cancelled `token` (before or during the
// call) stops it the same way and makes it throw heddle::task_cancelled. std::invalid_argument when
// max_tokens is 0. A future that a body returned and that never completes keeps the call waiting.
//
// Thread safety: thread-safe: any thread may call it, any number of calls at once (a body of one
// included: calls nest). The bodies run on the workers (and the caller, when it is one), a parallel
// filter's concurrently. Blocks until every item has left: a worker of the runtime runs the
// pipeline's tasks and other tasks meanwhile, any other thread sleeps.
// Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
// clang-format off
template <class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_pipeline(std::size_t max_tokens, const filter<void, void>& chain, const Options&... options) {
  core_detail::run_pipeline(nullptr, max_tokens, chain, core_detail::option_or(cancellation_token{}, options...));
}
template <class... Options>
  requires(core_detail::one_of_options<Options, cancellation_token> && ...)
void parallel_pipeline(runtime& rt, std::size_t max_tokens, const filter<void, void>& chain, const Options&... options) {
  core_detail::run_pipeline(&rt, max_tokens, chain, core_detail::option_or(cancellation_token{}, options...));
}
// clang-format on

}  // namespace heddle
