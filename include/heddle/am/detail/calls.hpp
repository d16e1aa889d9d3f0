// What the offload templates hand to the session's engine (src/am): a call waiting for its reply,
// and the non-template entry points that send and wait.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <utility>

#include "heddle/am/errors.hpp"
#include "heddle/am/serialize.hpp"
#include "heddle/async/promise.hpp"
#include "heddle/core/strategy.hpp"

namespace heddle::offload::detail {

// A call that waits for its reply. The engine calls exactly one of complete or fail, once, from
// the thread that receives the reply (or finds the peer lost), and the object deletes itself.
class pending_call {
 public:
  virtual void complete(std::span<const std::byte> reply) noexcept = 0;
  virtual void fail(std::exception_ptr e) noexcept = 0;

 protected:
  ~pending_call() = default;
};

// A call's result: decoded from the reply (all of it, nothing left over) into a promise.
template <class R>
class pending_result final : public pending_call {
 public:
  future<R> get_future() { return p_.get_future(); }

  void complete(std::span<const std::byte> reply) noexcept override {
    std::exception_ptr failure;
    try {
      reader r(reply);
      if constexpr (std::is_void_v<R>) {
        r.expect_end("call result");
        p_.set_value();
      } else {
        R v = offload::read<R>(r);
        r.expect_end("call result");
        p_.set_value(std::move(v));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    // Published outside the catch block: the waiter must not share an exception still being handled.
    if (failure) p_.set_exception(std::move(failure));
    delete this;
  }
  void fail(std::exception_ptr e) noexcept override {
    p_.set_exception(std::move(e));
    delete this;
  }

 private:
  promise<R> p_;
};

// Sends a call of handler `handler` to `to`; the engine owns `p` from here and fails it if the
// call cannot be sent. Throws session_error without a session.
void send_call(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args, pending_call* p);
// Sends a call that wants no reply.
void send_post(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args);
// Waits for `s` like future::wait, but a thread that is not a worker polls the transport itself
// while it waits (the latency of a round trip is then the transport's, with no thread woken).
void wait_polling(const heddle::detail::future_state_base* s);

}  // namespace heddle::offload::detail
