// SPDX-License-Identifier: Apache-2.0
// Objects that live on another node: heddle::offload::make_remote and remote_ptr.
//
//   struct counter { explicit counter(int start); int add(int n); int value() const; };
//   heddle::offload::remote_ptr<counter> c = heddle::offload::make_remote<counter>(1, 10);
//   heddle::future<int> f = c.call<&counter::add>(5);    // runs on node 1
//   int v = c.call<&counter::value>().get();
//
// make_remote<T>(node, args...) constructs a T from args on `node` (the arguments travel as a call's
// do) and returns a remote_ptr<T> that names it. `p.call<&T::method>(args...)` runs the method on
// the object and returns a future of its result. The calls on one object run one at a time, in the
// order the owner received them (the object has its own serial queue there, drained by a task of the
// owner's runtime, so a long method holds no receiving thread); calls on different objects run side
// by side. A remote_ptr is shared like a std::shared_ptr: when the last copy in this process is
// dropped, the object is destroyed on its node, after the calls already sent to it. A call on an
// object that no longer exists fails with remote_error; a lost node fails the calls as any offload's.
// Thread safety, as a std::shared_ptr's: the calls on one object are thread-safe through any
// remote_ptr copies; one remote_ptr object is assigned or destroyed only while no other thread uses
// it.
//
// The method is a template argument, not a call argument as in `p.call(&T::method, args)`: a member
// pointer's value means nothing in another process, so the message names a handler registered for
// the method's type at compile time, as f2f's function does (heddle/am/functor.hpp). T needs no
// registration of its own: using make_remote<T> and call<&T::m> registers their handlers.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "heddle/am/detail/calls.hpp"
#include "heddle/am/functor.hpp"
#include "heddle/am/offload.hpp"
#include "heddle/core/export.hpp"

namespace heddle::am_detail {

// The object a method call runs on (set by the engine while the owner's queue runs the call).
HEDDLE_EXPORT void* current_object() noexcept;
// Registers `object` with this node's engine; its id. `destroy` deletes it.
HEDDLE_EXPORT std::uint64_t adopt_object(void* object, void (*destroy)(void*));
// Sends a method call (`handler`, arguments) to object `id` on `node`; `p` as send_call's.
HEDDLE_EXPORT void send_object_call(node_id node, std::uint64_t id, std::uint32_t handler, const writer& args,
                                    pending_call* p);
// Tells `node` that object `id` is not wanted any more: it is destroyed after the calls before.
// Never throws: a session or a node that is gone has nothing to destroy.
HEDDLE_EXPORT void release_object(node_id node, std::uint64_t id) noexcept;

template <class T>
void destroy_object(void* p) {
  delete static_cast<T*>(p);
}

// The handler that makes a T on its node from A... (decayed): f2f<&construct_object<T, A...>>.
template <class T, class... A>
std::uint64_t construct_object(A... a) {
  return adopt_object(new T(std::move(a)...), &destroy_object<T>);
}

template <class M>
struct method_traits;
template <class R, class C, class... P>
struct method_traits<R (C::*)(P...)> {
  using result_type = R;
  using object_type = C;
  using args_type = std::tuple<std::remove_cvref_t<P>...>;
};
template <class R, class C, class... P>
struct method_traits<R (C::*)(P...) const> : method_traits<R (C::*)(P...)> {};

// A method call's handler, registered as function_call's are (under its type's name).
template <auto M>
class method_call {
  using traits = method_traits<decltype(M)>;

 public:
  using result_type = typename traits::result_type;
  using args_type = typename traits::args_type;
  static_assert(
      !std::is_pointer_v<result_type> && !std::is_reference_v<result_type>,
      "heddle::offload::remote_ptr::call: a method called remotely returns a value, not a pointer or a reference");

  static std::uint32_t index() {
    (void)registered_;
    static const std::uint32_t i = registry::instance().index_of(type_name<method_call>());
    return i;
  }
  static void handle(reader& args, writer& result) {
    args_type a = offload::read<args_type>(args);
    args.expect_end("arguments");
    auto* object = static_cast<typename traits::object_type*>(current_object());
    // A frame that names a method's handler outside an object call (a peer that misbehaves).
    if (!object) throw std::logic_error("heddle::offload: a method call without its object");
    auto run = [object](auto&&... p) -> decltype(auto) { return (object->*M)(std::move(p)...); };
    if constexpr (std::is_void_v<result_type>) std::apply(run, std::move(a));
    else offload::write(result, std::apply(run, std::move(a)));
  }

 private:
  inline static const bool registered_ = registry::instance().add(type_name<method_call>(), &handle);
};

// What the last remote_ptr of an object releases.
struct remote_handle {
  node_id node;
  std::uint64_t id;
  remote_handle(node_id n, std::uint64_t i) noexcept : node(n), id(i) {}
  remote_handle(const remote_handle&) = delete;
  remote_handle& operator=(const remote_handle&) = delete;
  ~remote_handle() { release_object(node, id); }
};

}  // namespace heddle::am_detail

namespace heddle::offload {

template <class T>
class remote_ptr {
 public:
  remote_ptr() = default;

  // The node the object lives on (0 for an empty remote_ptr). Thread-safe.
  node_id node() const noexcept { return handle_ ? handle_->node : 0; }
  // The object's number on its node (for messages and tests). Thread-safe.
  std::uint64_t id() const noexcept { return handle_ ? handle_->id : 0; }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

  // Runs M on the object, after the calls this object's owner received before; the future holds
  // the result or the failure (remote_error where the method threw or the object is gone,
  // peer_lost, session_error). Throws std::logic_error on an empty remote_ptr. Thread-safe; never
  // waits for the call.
  template <auto M, class... A>
  future<typename am_detail::method_call<M>::result_type> call(A&&... a) const {
    using R = typename am_detail::method_call<M>::result_type;
    static_assert(std::is_same_v<typename am_detail::method_traits<decltype(M)>::object_type, T>,
                  "heddle::offload::remote_ptr<T>::call<&M>: M is not a method of T");
    if (!handle_) throw std::logic_error("heddle::offload::remote_ptr::call on an empty remote_ptr");
    const typename am_detail::method_call<M>::args_type args(std::forward<A>(a)...);
    writer w;
    offload::write(w, args);
    auto* p = heddle::core_detail::make_record<am_detail::pending_result<R>>();
    future<R> f = p->get_future();
    am_detail::send_object_call(handle_->node, handle_->id, am_detail::method_call<M>::index(), w, p);
    return f;
  }

 private:
  template <class U, class... A>
  friend remote_ptr<U> make_remote(node_id node, A&&... a);
  remote_ptr(node_id node, std::uint64_t id) : handle_(std::make_shared<am_detail::remote_handle>(node, id)) {}
  std::shared_ptr<am_detail::remote_handle> handle_;
};

// Constructs a T from `a` on `node` and waits for it: its remote_ptr. Throws what the construction
// threw there (as remote_error), peer_lost, session_error. Thread-safe; blocks as offload::sync.
template <class T, class... A>
remote_ptr<T> make_remote(node_id node, A&&... a) {
  const std::uint64_t id = offload::sync(
      node, heddle::f2f<&am_detail::construct_object<T, std::remove_cvref_t<A>...>>(std::forward<A>(a)...));
  return remote_ptr<T>(node, id);
}

}  // namespace heddle::offload
