// SPDX-License-Identifier: Apache-2.0
// The offload API's non-template half: calls and buffers, handed to the open session's engine.
#include "engine.hpp"
#include "heddle/am/buffer.hpp"
#include "heddle/am/offload.hpp"
#include "heddle/am/remote.hpp"

namespace heddle::offload {

node_id this_node() {
  am_detail::engine& e = am_detail::current_engine();
  return am_detail::current_node_of(e);
}
node_id num_nodes() { return am_detail::current_engine().nodes(); }

}  // namespace heddle::offload

namespace heddle::am_detail {

// `p` failed with the session_error that there is no session.
void fail_without_session(pending_call* p) noexcept {
  std::exception_ptr failure;
  try {
    throw_no_session();
  } catch (...) {
    failure = std::current_exception();
  }
  // Failed outside the catch block: a waiter must never share an exception still being handled here.
  p->fail(std::move(failure));
}

void send_call(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args, pending_call* p) {
  if (engine* e = engine_or_fail(p)) e->call(current_node_of(*e), to, handler, how, args.data(), p);
}

void send_tree(std::uint32_t handler, heddle::strategy how, const writer& args, pending_call* p) {
  if (engine* e = engine_or_fail(p)) e->tree_call(current_node_of(*e), handler, how, args.data(), p);
}

std::uint64_t adopt_object(void* object, void (*destroy)(void*)) {
  try {
    engine& e = current_engine();
    return e.objects().adopt(current_node_of(e), object, destroy);
  } catch (...) {
    destroy(object);  // nobody else will
    throw;
  }
}

void send_object_call(node_id node, std::uint64_t id, std::uint32_t handler, const writer& args, pending_call* p) {
  if (engine* e = engine_or_fail(p)) e->object_call(current_node_of(*e), node, id, handler, args.data(), p);
}

void release_object(node_id node, std::uint64_t id) noexcept {
  if (engine* e = acquire_engine()) {
    try {
      e->release_object(current_node_of(*e), node, id);
    } catch (...) {
      // The node is lost or gone: its objects went with it.
    }
    release_engine();
  }
}

void send_post(node_id to, std::uint32_t handler, heddle::strategy how, const writer& args) {
  engine& e = current_engine();
  e.post(current_node_of(e), to, handler, how, args.data());
}

void drive_reply(heddle::core_detail::future_state_base* s) noexcept {
  if (engine* e = acquire_engine()) {
    e->poll_until(s);
    release_engine();
  }
}

// Run on the node that owns the memory.
buffer_ref allocate_here(std::uint64_t bytes, std::uint64_t alignment) {
  engine& e = current_engine();
  return e.buffers().allocate(e.wire(), current_node_of(e), bytes, static_cast<std::size_t>(alignment));
}
void free_here(std::uint64_t id, std::uint64_t offset) {
  engine& e = current_engine();
  e.buffers().free(current_node_of(e), id, offset);
}
void copy_from_here(buffer_ref from, buffer_ref to, std::uint64_t bytes) {
  put_bytes(local_address(from), to, bytes).get();
}

buffer_ref allocate_bytes(node_id node, std::uint64_t bytes, std::size_t alignment) {
  return offload::sync(node, heddle::f2f<&allocate_here>(bytes, std::uint64_t{alignment}));
}

void free_bytes(const buffer_ref& b) {
  engine& e = current_engine();
  offload::sync(b.node, heddle::f2f<&free_here>(b.id, b.offset));
  e.wire().forget(b.node, b.id);
}

std::byte* local_address(const buffer_ref& b) {
  engine& e = current_engine();
  const node_id here = current_node_of(e);
  if (b.node != here)
    throw session_error("heddle::offload: buffer_ptr::get on node " + std::to_string(here) + " for memory of node " +
                        std::to_string(b.node) + ": use put/get, or offload to node " + std::to_string(b.node));
  return e.buffers().span(here, b.id, b.offset, b.bytes);
}

future<void> put_bytes(const std::byte* local, const buffer_ref& to, std::uint64_t bytes) {
  return current_engine().put(local, to, bytes);
}

future<void> get_bytes(const buffer_ref& from, std::byte* local, std::uint64_t bytes) {
  return current_engine().get(from, local, bytes);
}

future<void> scatter_bytes(const std::byte* local, std::span<const buffer_ref> to, std::uint64_t each) {
  return current_engine().scatter(local, to, each);
}

future<void> gather_bytes(std::span<const buffer_ref> from, std::byte* local, std::uint64_t each) {
  return current_engine().gather(from, local, each);
}

future<void> copy_bytes(const buffer_ref& from, const buffer_ref& to, std::uint64_t bytes) {
  if (bytes > from.bytes || bytes > to.bytes)
    throw std::out_of_range("heddle::offload::copy: " + std::to_string(bytes) + " bytes between buffer_ptrs of " +
                            std::to_string(from.bytes) + " and " + std::to_string(to.bytes));
  engine& e = current_engine();
  const node_id here = current_node_of(e);
  if (from.node == here) return e.put(local_address(from), to, bytes);
  if (to.node == here) return e.get(from, local_address(to), bytes);
  // Between two other nodes: the source node puts into the destination (peer to peer).
  return offload::async(from.node, heddle::f2f<&copy_from_here>(from, to, bytes));
}

}  // namespace heddle::am_detail
