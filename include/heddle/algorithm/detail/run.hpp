// SPDX-License-Identifier: Apache-2.0
// What every parallel algorithm shares: the trailing options of a call (a partitioner, a
// cancellation token, in any order) and the root that runs the algorithm's task tree in one task
// group, links the caller's token to it, and turns the group's outcome into the call's: the first
// exception rethrown, task_cancelled when the token stopped the work.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "heddle/core/cancellation.hpp"
#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/cancel_state.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/errors.hpp"
#include "heddle/core/runtime.hpp"
#include "heddle/core/task_group.hpp"

namespace heddle::core_detail {

// The first of `options` whose type is T, or `fallback` when there is none.
template <class T, class... O>
T option_or(T fallback, const O&... options) {
  T found = std::move(fallback);
  [[maybe_unused]] bool seen = false;  // unused when there are no options
  (([&] {
     if constexpr (std::is_same_v<std::remove_cvref_t<O>, T>)
       if (!seen) {
         found = options;
         seen = true;
       }
   }()),
   ...);
  return found;
}

// Whether each option is one of the types an algorithm takes (for its requires-clause).
template <class O, class... Allowed>
concept one_of_options = (std::is_same_v<std::remove_cvref_t<O>, Allowed> || ...);

// While armed, cancelling the caller's token cancels the algorithm's group: pieces not yet started
// are skipped at once, running ones see it at their next check.
class token_link {
 public:
  token_link(const cancellation_token& token, task_group& g) noexcept : state_(access::state_of(token)), group_(&g) {
    hook_.fire = &fire;
    if (state_ && !state_->add(&hook_)) g.cancel();  // already cancelled
  }
  ~token_link() {
    if (state_) state_->remove(&hook_);
  }
  token_link(const token_link&) = delete;
  token_link& operator=(const token_link&) = delete;

 private:
  struct hook : cancel_hook {
    task_group* group = nullptr;
  };
  static void fire(cancel_hook* h) noexcept {
    auto* self = static_cast<hook*>(h);
    self->group->cancel();
    h->finish_firing();
  }
  cancel_state* state_;
  task_group* group_;
  hook hook_{{}, group_};
};

// Runs root(g) as the root of an algorithm's task tree in a group `g` on `rt` (the calling
// worker's runtime or the current one when null) and returns once every task it spawned into `g`
// has finished. On one of the runtime's workers the root runs on the calling thread; from any
// other thread it runs as a task there and the caller sleeps. The first exception (from the root
// or a task) is rethrown after the rest of the work has stopped; a cancelled `token` (or one
// cancelled during the call) makes the call throw task_cancelled naming `what`.
template <class Root>
void run_algorithm(runtime* rt, const cancellation_token& token, const char* what, Root&& root) {
  if (token.cancelled()) throw task_cancelled(std::string(what) + ": cancelled before it started");
  task_group g = rt ? task_group(*rt) : task_group();
  token_link link(token, g);
  if (runs_on_caller(g)) {
    try {
      root(g);
    } catch (...) {
      g.cancel();
      try {
        g.wait();
      } catch (...) {  // the root's own exception came first
      }
      throw;
    }
  } else {
    g.run([&] { root(g); });
  }
  if (g.wait() == task_group_status::cancelled) throw task_cancelled(std::string(what) + ": cancelled");
}

}  // namespace heddle::core_detail
