// What the offload templates hand to the session's engine (src/am): a call waiting for its reply,
// and the non-template entry points that send and wait.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <utility>

#include "heddle/am/errors.hpp"
#include "heddle/am/serialize.hpp"
#include "heddle/core/detail/future_state.hpp"
#include "heddle/core/future.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::offload::detail {

// A call that waits for its reply. The engine calls exactly one of complete or fail, once, from
// the thread that receives the reply (or finds the peer lost), and the object deletes itself.
class pending_call {
 public:
  virtual void complete(std::span<const std::byte> reply) noexcept = 0;
  virtual void fail(std::exception_ptr e) noexcept = 0;
  // Memory where a reply of `bytes` bytes may be received directly (a get's destination), or nullptr.
  virtual std::byte* destination(std::uint64_t /*bytes*/) noexcept { return nullptr; }

 protected:
  virtual ~pending_call() = default;
};

// Polls for the reply of a call until `s` is done or the caller's patience ends (engine.cpp): the
// `drive` of every offload future, so that a thread that is not a worker waiting on one (get(),
// wait(), sync) reads its reply itself instead of sleeping until another thread has.
void drive_reply(heddle::detail::future_state_base* s) noexcept;

// The state of an offload's future: a promise's, whose waiters poll for the reply.
template <class R>
class reply_state final : public heddle::detail::future_state<R> {
 public:
  reply_state() noexcept : heddle::detail::future_state<R>(&vtable) {}

 private:
  static void never_queued(heddle::detail::task_base*) noexcept { std::terminate(); }
  static void destroy(heddle::detail::future_state_base* b) noexcept { heddle::detail::free_record(static_cast<reply_state*>(b)); }
  static constexpr heddle::detail::future_vtable vtable{{&never_queued, &never_queued}, nullptr, &destroy, &drive_reply};
};

// A call waiting for its reply, with the future it completes.
template <class R>
class pending_reply : public pending_call {
 public:
  pending_reply() : s_(heddle::detail::make_record<reply_state<R>>()) {}
  // The future; taken once, before the call is sent.
  future<R> get_future() noexcept { return future<R>(heddle::detail::adopt, s_); }
  void fail(std::exception_ptr e) noexcept override {
    s_->set_error(std::move(e));
    publish();
  }

 protected:
  reply_state<R>* state() const noexcept { return s_; }
  // Completes the future with what is stored, and ends this call.
  void publish() noexcept {
    s_->complete();
    delete this;
  }

 private:
  reply_state<R>* s_;
};

// A call's result: decoded from the reply (all of it, nothing left over) into the future's state.
template <class R>
class pending_result final : public pending_reply<R> {
 public:
  void complete(std::span<const std::byte> reply) noexcept override {
    std::exception_ptr failure;
    try {
      reader r(reply);
      if constexpr (std::is_void_v<R>) {
        r.expect_end("call result");
        this->state()->set_value();
      } else {
        R v = offload::read<R>(r);
        r.expect_end("call result");
        this->state()->set_value(std::move(v));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    // Published outside the catch block: the waiter must not share an exception still being handled.
    if (failure) return this->fail(std::move(failure));
    this->publish();
  }
};

// Sends a call of handler `handler` to `to`; the engine owns `p` from here and fails it if the
// call cannot be sent. Throws session_error without a session.
void send_call(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args, pending_call* p);
// Sends a call that wants no reply.
void send_post(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args);

}  // namespace heddle::offload::detail
