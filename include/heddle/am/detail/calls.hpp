// SPDX-License-Identifier: Apache-2.0
// What the offload templates hand to the session's engine (src/am): a call waiting for its reply,
// and the non-template entry points that send and wait.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <span>
#include <utility>

#include "heddle/am/errors.hpp"
#include "heddle/am/serialize.hpp"
#include "heddle/core/detail/assert.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::am_detail {

// A call that waits for its reply. The engine calls exactly one of complete or fail, once, from
// the thread that receives the reply (or finds the peer lost); the object may be gone after it.
class HEDDLE_EXPORT pending_call {
 public:
  virtual void complete(std::span<const std::byte> reply) noexcept = 0;
  // complete, called by the thread that will wait for the call, while it polls for the reply
  // (sync's direct call, engine.cpp): nobody waits on the state yet, so publishing it needs no
  // atomic exchange.
  virtual void complete_here(std::span<const std::byte> reply) noexcept { complete(reply); }
  virtual void fail(std::exception_ptr e) noexcept = 0;
  // Memory where a reply of `bytes` bytes may be received directly (a get's destination), or nullptr.
  virtual std::byte* destination(std::uint64_t /*bytes*/) noexcept { return nullptr; }

 protected:
  ~pending_call() = default;
};

// Polls for the reply of a call until `s` is done or the caller's patience ends (engine.cpp): the
// `drive` of every offload future, so that a thread that is not a worker waiting on one (get(),
// wait(), sync) reads its reply itself instead of sleeping until another thread has.
HEDDLE_EXPORT void drive_reply(heddle::core_detail::future_state_base* s) noexcept;

// The future's state of an offload (a call, a transfer, a group of transfers), whose waiters drive
// the transport (drive_reply). Owned: one record (from the runtime's block caches) that the future
// frees when both it is dropped and the result published, whichever comes last; Derived is the
// concrete class (its size and destructor free the record). Not owned: an object on the stack of
// a caller that waits for it (force) and reads the result before it returns (sync): no future
// adopts it, so nothing frees it.
template <class R, class Derived, bool Owned = true>
class reply_state : public heddle::core_detail::future_state<R> {
 public:
  reply_state() noexcept : heddle::core_detail::future_state<R>(&vtable) {}
  // The future; taken once, before the work starts.
  future<R> get_future() noexcept {
    return future<R>(heddle::core_detail::adopt, static_cast<heddle::core_detail::future_state<R>*>(this));
  }

 protected:
  // Completes the future with what is stored. The record may be gone when this returns. Here: on
  // the thread that alone can wait on the state, before it does (pending_call::complete_here).
  template <bool Here = false>
  void publish() noexcept {
    if constexpr (Here) heddle::core_detail::future_state_base::complete_owned();
    else heddle::core_detail::future_state_base::complete();
  }
  // Stores the failure and publishes.
  void publish_failure(std::exception_ptr e) noexcept {
    this->set_error(std::move(e));
    publish();
  }
  // Runs `decode`, which stores the value, then publishes; what it throws fails the future instead.
  template <bool Here = false, class F>
  void settle(F&& decode) noexcept {
    std::exception_ptr failure;
    try {
      decode();
    } catch (...) {
      failure = std::current_exception();
    }
    // Published outside the catch block: the waiter must not share an exception still being handled.
    if (failure) return publish_failure(std::move(failure));
    publish<Here>();
  }

 private:
  static void destroy(heddle::core_detail::future_state_base* b) noexcept {
    // Only a future's release or an abandoned completion destroys a state: never one on a stack.
    if constexpr (!Owned)
      heddle::core_detail::fatal_internal("a reply state on its caller's stack was freed", "heddle::offload");
    else heddle::core_detail::free_record(static_cast<Derived*>(static_cast<heddle::core_detail::future_state<R>*>(b)));
  }
  static constexpr heddle::core_detail::future_vtable vtable{heddle::core_detail::not_a_task, nullptr, &destroy,
                                                             &drive_reply};
};

// A call waiting for its reply that is also its future's state.
template <class R, class Derived, bool Owned = true>
class pending_reply : public reply_state<R, Derived, Owned>, public pending_call {
 public:
  void fail(std::exception_ptr e) noexcept override { this->publish_failure(std::move(e)); }
};

// A call's result: decoded from the reply (all of it, nothing left over) into the future's state.
// Owned: a record behind offload::async's future; not owned: sync's, on its caller's stack.
template <class R, bool Owned = true>
class pending_result final : public pending_reply<R, pending_result<R, Owned>, Owned> {
 public:
  // The result, after the state is done (sync): the value moved out, or the failure rethrown.
  R take() {
    if constexpr (std::is_void_v<R>) this->value_ref();
    else return std::move(this->value_ref());
  }
  void complete(std::span<const std::byte> reply) noexcept override { complete_as<false>(reply); }
  void complete_here(std::span<const std::byte> reply) noexcept override { complete_as<true>(reply); }

 private:
  template <bool Here>
  void complete_as(std::span<const std::byte> reply) noexcept {
    if constexpr (std::is_void_v<R>) {
      // A void result is no bytes: stored and published without the decoder's frame around it,
      // which a reply with bytes in it (a corrupt one) takes to fail the future.
      if (reply.empty()) [[likely]] {
        this->set_value();
        return this->template publish<Here>();
      }
      return decode_out_of_line<Here>(reply);
    }
    decode<Here>(reply);
  }
  template <bool Here>
  [[gnu::noinline]] void decode_out_of_line(std::span<const std::byte> reply) noexcept {
    decode<Here>(reply);
  }
  template <bool Here>
  void decode(std::span<const std::byte> reply) noexcept {
    this->template settle<Here>([&] {
      reader r(reply);
      if constexpr (std::is_void_v<R>) {
        r.expect_end("call result");
        this->set_value();
      } else {
        R v = offload::read<R>(r);
        r.expect_end("call result");
        this->set_value(std::move(v));
      }
    });
  }
};

// The future of offload::broadcast (R: std::vector of the results) and for_each_node (void): the
// engine completes it with a u64 count and then the results' encodings in node order, or fails it
// with the first node's failure in node order.
template <class R>
class pending_tree final : public pending_reply<R, pending_tree<R>> {
 public:
  void complete(std::span<const std::byte> reply) noexcept override {
    this->settle([&] {
      reader r(reply);
      const auto count = offload::read<std::uint64_t>(r);
      if constexpr (std::is_void_v<R>) {
        (void)count;  // for_each_node: the results are not wanted
        this->set_value();
      } else {
        R v;
        v.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, r.remaining() + 1)));
        for (std::uint64_t i = 0; i < count; ++i) v.push_back(offload::read<typename R::value_type>(r));
        r.expect_end("broadcast results");
        this->set_value(std::move(v));
      }
    });
  }
};

// A call made with no strategy (offload's calls without one): the target applies the default rule
// (docs/am.md, "Calls"). Travels as message.hpp's by_rule_code; never reaches the runtime.
inline constexpr heddle::strategy by_rule = static_cast<heddle::strategy>(heddle::strategy_count);

// Sends a call of handler `handler` to `to`; the engine owns `p` from here and fails it if the
// call cannot be sent. Throws session_error without a session.
HEDDLE_EXPORT void send_call(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args,
                             pending_call* p);
// sync's half: sends the call as send_call does, then, on a thread that is not a worker, polls for
// its reply as drive_reply would (`s` is `p`'s future state, on the caller's stack); the caller
// then waits for `s` as for any future (force), which returns at once when the reply has come.
HEDDLE_EXPORT void call_and_poll(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args,
                                 pending_call* p, heddle::core_detail::future_state_base* s);
// Sends a call of `handler` to every other node along a tree (detail/tree.hpp); `p` as for send_call.
HEDDLE_EXPORT void send_tree(std::uint32_t handler, heddle::strategy how, const writer& args, pending_call* p);
// Sends a call that wants no reply.
HEDDLE_EXPORT void send_post(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args);

}  // namespace heddle::am_detail
