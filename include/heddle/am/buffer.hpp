// SPDX-License-Identifier: Apache-2.0
// Memory on another node, and the data transfers between nodes (HAM's buffer_ptr):
//
//   heddle::offload::buffer_ptr<float> b = heddle::offload::allocate<float>(1, n);
//   heddle::offload::put(local, b, n).get();     // local → node 1
//   heddle::offload::get(b, local, n).get();     // node 1 → local
//   heddle::offload::copy(b, b2, n).get();       // node 1 → b2's node, whichever calls it
//   heddle::offload::free(b);
//   heddle::offload::scatter(local, buffers, n).get();  // block i of n elements → buffers[i]
//   heddle::offload::gather(buffers, local, n).get();   // buffers[i] → block i
//
// A buffer_ptr names memory on its node: it can be passed to a function called there (heddle::f2f) and
// turned into a pointer there with .get(). Element types are trivially copyable. Transfers move
// bytes without a message per element: the shm backend copies straight between the processes'
// memory, the others stream the bytes into place. Every transfer is checked against the buffer's
// bounds on the node that owns it; a freed or foreign buffer is an error naming the node, never a
// wild write. The local memory of put and get must stay alive until the future is ready.
// Thread safety: every call below is thread-safe (a buffer_ptr is a value), from any thread of a
// process with an open session; transfers that overlap in memory are the caller's to order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "heddle/am/errors.hpp"
#include "heddle/am/serialize.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/future.hpp"

namespace heddle::offload {

template <class T>
class [[nodiscard]] buffer_ptr;

}  // namespace heddle::offload

namespace heddle::am_detail {
struct buffer_ref {
  node_id node = 0;
  std::uint64_t id = 0;      // the owner's number for the allocation; 0 is never used
  std::uint64_t offset = 0;  // bytes from the allocation's start
  std::uint64_t bytes = 0;   // bytes from offset to the allocation's end
};
HEDDLE_EXPORT buffer_ref allocate_bytes(node_id node, std::uint64_t bytes, std::size_t alignment);
HEDDLE_EXPORT void free_bytes(const buffer_ref& b);
// The memory behind `b` on the node that owns it; session_error elsewhere or once freed.
HEDDLE_EXPORT std::byte* local_address(const buffer_ref& b);
HEDDLE_EXPORT future<void> put_bytes(const std::byte* local, const buffer_ref& to, std::uint64_t bytes);
HEDDLE_EXPORT future<void> get_bytes(const buffer_ref& from, std::byte* local, std::uint64_t bytes);
HEDDLE_EXPORT future<void> copy_bytes(const buffer_ref& from, const buffer_ref& to, std::uint64_t bytes);
HEDDLE_EXPORT future<void> scatter_bytes(const std::byte* local, std::span<const buffer_ref> to, std::uint64_t each);
HEDDLE_EXPORT future<void> gather_bytes(std::span<const buffer_ref> from, std::byte* local, std::uint64_t each);
template <class T>
std::vector<buffer_ref> refs_of(std::span<const offload::buffer_ptr<T>> buffers) {
  std::vector<buffer_ref> refs;
  refs.reserve(buffers.size());
  for (const offload::buffer_ptr<T>& b : buffers) refs.push_back(b.ref());
  return refs;
}
}  // namespace heddle::am_detail

namespace heddle::offload {

template <class T>
class [[nodiscard]] buffer_ptr {
  static_assert(std::is_trivially_copyable_v<T>, "heddle::offload::buffer_ptr: elements travel bitwise");

 public:
  buffer_ptr() noexcept = default;
  // From the layer's own reference (allocate, and a buffer_ptr read from a message).
  explicit buffer_ptr(const am_detail::buffer_ref& r) noexcept : ref_(r) {}

  // The node that owns the memory. Thread-safe.
  node_id node() const noexcept { return ref_.node; }
  // Elements from here to the allocation's end. Thread-safe.
  std::size_t size() const noexcept { return static_cast<std::size_t>(ref_.bytes / sizeof(T)); }
  explicit operator bool() const noexcept { return ref_.id != 0; }

  // The element `n` further on (within the allocation: std::out_of_range otherwise). Thread-safe.
  buffer_ptr operator+(std::size_t n) const {
    if (n > size()) throw std::out_of_range("heddle::offload::buffer_ptr: offset beyond the allocation");
    buffer_ptr r = *this;
    r.ref_.offset += n * sizeof(T);
    r.ref_.bytes -= n * sizeof(T);
    return r;
  }

  // The memory, on the node that owns it (inside a function offloaded there); session_error
  // elsewhere or once freed. Thread-safe.
  T* get() const { return reinterpret_cast<T*>(am_detail::local_address(ref_)); }

  friend bool operator==(const buffer_ptr& a, const buffer_ptr& b) noexcept {
    return a.ref_.node == b.ref_.node && a.ref_.id == b.ref_.id && a.ref_.offset == b.ref_.offset;
  }

  const am_detail::buffer_ref& ref() const noexcept { return ref_; }

 private:
  am_detail::buffer_ref ref_;
};

// `n` elements of T on `node` (uninitialised, aligned for T and to 64 bytes). Thread-safe; blocks
// as offload::sync (a call to `node`).
template <class T>
buffer_ptr<T> allocate(node_id node, std::size_t n) {
  return buffer_ptr<T>(am_detail::allocate_bytes(node, std::uint64_t{n} * sizeof(T),
                                                 alignof(T) > 64 ? alignof(T) : 64));
}

// Returns the memory to its node. Freeing twice, or a pointer that is not an allocation's start,
// is an error naming the node. Thread-safe; blocks as offload::sync.
template <class T>
void free(const buffer_ptr<T>& b) {
  am_detail::free_bytes(b.ref());
}

// Writes n elements from local memory into `to`. Thread-safe; never waits for the transfer.
template <class T>
future<void> put(const T* local, const buffer_ptr<T>& to, std::size_t n) {
  return am_detail::put_bytes(reinterpret_cast<const std::byte*>(local), to.ref(), std::uint64_t{n} * sizeof(T));
}
// Reads n elements of `from` into local memory. Thread-safe; never waits for the transfer.
template <class T>
future<void> get(const buffer_ptr<T>& from, T* local, std::size_t n) {
  return am_detail::get_bytes(from.ref(), reinterpret_cast<std::byte*>(local), std::uint64_t{n} * sizeof(T));
}
// Copies n elements between two buffers, wherever they are. Thread-safe; never waits for the
// transfer.
template <class T>
future<void> copy(const buffer_ptr<T>& from, const buffer_ptr<T>& to, std::size_t n) {
  return am_detail::copy_bytes(from.ref(), to.ref(), std::uint64_t{n} * sizeof(T));
}

// Writes block i of `local` (the n elements from local + i·n) into to[i], for every i: MPI_Scatter's
// shape over buffer_ptrs, which may be on any nodes (this one included, several on one node). The
// blocks go out at once, one after another from this thread (on shm each is a copy by this thread;
// elsewhere a put frame each), and their replies are awaited together, so the whole costs about
// one round trip beside the bytes. The future is ready when every block is in place, or fails
// with the failure of the first buffer, in to's order, that failed (remote_error naming the node
// that refused it, a freed buffer; peer_lost naming a lost node); the other blocks are written
// all the same. Throws std::out_of_range, with nothing sent, when a buffer holds fewer than n
// elements. An empty `to` gives a ready future. `local` must stay alive until the future is ready.
// Thread-safe; never waits for the transfers (on shm, this thread copies the blocks).
//
// Unlike broadcast, scatter and gather do not travel along a tree: every byte leaves (or reaches)
// this node once either way, and a tree would add hops and copies on the nodes between.
template <class T>
future<void> scatter(const T* local, std::type_identity_t<std::span<const buffer_ptr<T>>> to, std::size_t n) {
  return am_detail::scatter_bytes(reinterpret_cast<const std::byte*>(local), am_detail::refs_of(to),
                                  std::uint64_t{n} * sizeof(T));
}
// Reads n elements of from[i] into block i of `local` (local + i·n), for every i: MPI_Gather's shape,
// as scatter's: the requests go out at once and the blocks arrive together (each straight into its
// place where the transport can: shm copies, mpi and tcp read a large block into it). Ready, or
// failing, as scatter's future; out_of_range as scatter. Thread-safe; never waits for the transfers.
template <class T>
future<void> gather(std::type_identity_t<std::span<const buffer_ptr<T>>> from, T* local, std::size_t n) {
  return am_detail::gather_bytes(am_detail::refs_of(from), reinterpret_cast<std::byte*>(local),
                                 std::uint64_t{n} * sizeof(T));
}

// A buffer_ptr is trivially copyable: it travels in messages bitwise, and means the same memory on
// every node.

}  // namespace heddle::offload
