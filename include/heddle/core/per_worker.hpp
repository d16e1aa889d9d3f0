// SPDX-License-Identifier: Apache-2.0
// heddle::per_worker<T>: one T per worker of a runtime, plus one per other thread that asks
// (oneTBB's enumerable_thread_specific and combinable).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "heddle/core/detail/access.hpp"
#include "heddle/core/detail/scheduling.hpp"
#include "heddle/core/detail/worker.hpp"
#include "heddle/core/export.hpp"
#include "heddle/core/runtime.hpp"

namespace heddle {

namespace core_detail {

// A process-wide unique id per per_worker (and per clear()), never 0: the key of the one-entry
// cache through which a thread outside the runtime finds its slot without the lock. Also the
// source of thread_serial.
HEDDLE_EXPORT std::uint64_t new_per_worker_id() noexcept;

// The calling thread's key among a per_worker's outsider slots, unique for the process's lifetime:
// unlike a std::thread::id, never reused by a later thread, which must get a slot of its own.
HEDDLE_FAST_TLS(std::uint64_t, thread_serial);  // src/core/runtime_core.cpp
inline std::uint64_t this_thread_serial() noexcept {
  std::uint64_t s = thread_serial;
  if (s == 0) [[unlikely]]
    thread_serial = s = new_per_worker_id();
  return s;
}

struct per_worker_last_slot {
  std::uint64_t owner = 0;
  void* slot = nullptr;
};
inline constinit thread_local per_worker_last_slot last_outsider_slot{};

// One value on its own cache lines (none shared with another slot: no false sharing).
template <class T>
struct alignas(64) per_worker_slot {
  per_worker_slot() noexcept {}
  ~per_worker_slot() { reset(); }
  per_worker_slot(const per_worker_slot&) = delete;
  per_worker_slot& operator=(const per_worker_slot&) = delete;
  template <class Make>
  T& make(Make& m) {
    ::new (static_cast<void*>(std::addressof(value))) T(m());
    made = true;
    return value;
  }
  void reset() noexcept {
    if (made) value.~T();
    made = false;
  }
  bool made = false;
  union {
    T value;
  };
};

}  // namespace core_detail

// One T per thread, for accumulating in parallel without sharing: local() gives the calling
// thread's own T, combine() folds them at the end.
//
//   heddle::per_worker<long> sum(0L);
//   heddle::parallel_for(0, n, [&](std::size_t i) { sum.local() += v[i]; });
//   long total = sum.combine(std::plus<>{});
//
// Slots: one per worker of the runtime current at construction (current_runtime()) or of the one
// given, and one per other thread that calls local() (a thread outside the runtime, or a worker of
// another runtime). A slot's T is made on the first local() of that slot: copied from the exemplar,
// made by the factory, or value-initialised. Slots never move once made, each on its own cache
// lines.
//
// Costs: construction allocates one padded slot per worker (std::bad_alloc) and, without a runtime
// argument, may start the default runtime (configuration_error); T is made lazily, never here.
//
// Thread safety: local() may be called from any thread at any time. combine(), combine_each(),
// iteration, size() and clear() must not run concurrently with local() or with each other (as in
// oneTBB): call them after the parallel work is joined. The runtime must outlive the calls to
// local() (it is only compared with the calling worker's, never used).
template <class T>
class per_worker {
  using slot = core_detail::per_worker_slot<T>;

  template <bool Const>
  class basic_iterator;

 public:
  using value_type = T;
  using reference = T&;
  using const_reference = const T&;
  using size_type = std::size_t;
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  // Slots value-initialised (T{}) on first use. The constructors are thread-safe.
  per_worker() : per_worker(current_runtime()) {}
  explicit per_worker(runtime& rt)
      : per_worker(
            rt, [] { return T{}; }, 0) {}
  // Each slot a copy of `exemplar`.
  explicit per_worker(const T& exemplar) : per_worker(current_runtime(), exemplar) {}
  per_worker(runtime& rt, const T& exemplar)
      : per_worker(
            rt, [exemplar] { return exemplar; }, 0) {}
  // Each slot made by make() on its first local(); make is called once per slot used, on the
  // thread that uses it, and may run concurrently with itself for different slots.
  // Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
  // clang-format off
  template <class Factory>
    requires(std::is_invocable_r_v<T, Factory&> && !std::is_convertible_v<Factory, T>)
  explicit per_worker(Factory make) : per_worker(current_runtime(), std::move(make), 0) {}
  template <class Factory>
    requires(std::is_invocable_r_v<T, Factory&> && !std::is_convertible_v<Factory, T>)
  per_worker(runtime& rt, Factory make) : per_worker(rt, std::move(make), 0) {}
  // clang-format on

  per_worker(const per_worker&) = delete;
  per_worker& operator=(const per_worker&) = delete;
  ~per_worker() = default;

  // The calling thread's T, made on first use (what making it throws propagates, and the slot stays
  // unmade). On a worker of this object's runtime: its slot by index, O(1), no lock. On any other
  // thread: a one-entry thread-local cache, else a linear lookup among the outsiders' slots (and on
  // first use the new slot: std::bad_alloc) under a mutex. Thread-safe: any thread, any time (not
  // with clear()).
  T& local() {
    const core_detail::worker* w = core_detail::current_worker;
    if (w && w->core == core_) [[likely]] {
      slot& s = workers_[w->index];
      return s.made ? s.value : s.make(make_);
    }
    return outsider_local();
  }
  // As local(); `exists` says whether the slot had been made before this call (oneTBB's spelling).
  // Thread-safe, as local().
  T& local(bool& exists) {
    exists = local_exists();
    return local();
  }

  // How many slots are made. Not thread-safe: after the parallel work is joined (not with local()),
  // as every call below.
  size_type size() const noexcept {
    size_type n = outsiders_.size();
    for (std::size_t i = 0; i < num_workers_; ++i) n += workers_[i].made ? 1 : 0;
    return n;
  }
  bool empty() const noexcept { return size() == 0; }

  // The made slots: workers' in worker order, then outsiders' in the order they were made. Not
  // thread-safe (after the parallel work).
  iterator begin() noexcept { return iterator(this, first_made(0)); }
  iterator end() noexcept { return iterator(this, end_index()); }
  const_iterator begin() const noexcept { return const_iterator(this, first_made(0)); }
  const_iterator end() const noexcept { return const_iterator(this, end_index()); }

  // op(op(op(a, b), c), ...) over the made slots (copies; the slots are left as they are), without
  // an identity. With no slot made, a T made as a slot would be: a copy of the exemplar, the
  // factory's result, or T{} (as oneTBB's combine). Throws what op, T's copy or the factory throws.
  // Not thread-safe (after the parallel work).
  template <class Op>
  T combine(Op op) const {
    const_iterator it = begin();
    if (it == end()) return make_();
    T result = *it;
    for (++it; it != end(); ++it) result = op(std::move(result), *it);
    return result;
  }
  // f(slot) for each made slot, in the order of iteration. Not thread-safe (after the parallel work).
  template <class F>
  void combine_each(F&& f) {
    for (T& v : *this) f(v);
  }
  template <class F>
  void combine_each(F&& f) const {
    for (const T& v : *this) f(v);
  }

  // Destroys every slot's T; the next local() of each makes a new one. Not thread-safe (after the
  // parallel work, not with local()).
  void clear() noexcept {
    for (std::size_t i = 0; i < num_workers_; ++i) workers_[i].reset();
    outsiders_.clear();
    outsider_ids_.clear();
    id_ = core_detail::new_per_worker_id();  // forgets the outsiders' cached slots
  }

 private:
  template <class Make>
  per_worker(runtime& rt, Make&& make, int)
      : core_(core_detail::access::core_of(rt)),
        num_workers_(rt.num_threads()),
        workers_(new slot[num_workers_]),
        make_(std::forward<Make>(make)),
        id_(core_detail::new_per_worker_id()) {}

  T& outsider_local() {
    core_detail::per_worker_last_slot& last = core_detail::last_outsider_slot;
    if (last.owner == id_) return static_cast<slot*>(last.slot)->value;
    const std::uint64_t me = core_detail::this_thread_serial();
    std::lock_guard lock(m_);
    slot* s = find_outsider(me);
    if (!s) {
      auto made = std::make_unique<slot>();
      made->make(make_);
      outsider_ids_.reserve(outsider_ids_.size() + 1);
      outsiders_.push_back(std::move(made));
      outsider_ids_.push_back(me);
      s = outsiders_.back().get();
    }
    last = {id_, s};
    return s->value;
  }

  bool local_exists() {
    const core_detail::worker* w = core_detail::current_worker;
    if (w && w->core == core_) return workers_[w->index].made;
    if (core_detail::last_outsider_slot.owner == id_) return true;
    std::lock_guard lock(m_);
    return find_outsider(core_detail::this_thread_serial()) != nullptr;
  }

  slot* find_outsider(std::uint64_t me) const noexcept {
    auto it = std::find(outsider_ids_.begin(), outsider_ids_.end(), me);
    return it == outsider_ids_.end() ? nullptr : outsiders_[static_cast<std::size_t>(it - outsider_ids_.begin())].get();
  }

  // Iteration runs over indices 0 .. num_workers_ + outsiders: worker slots (skipping unmade ones),
  // then outsider slots (always made).
  std::size_t end_index() const noexcept { return num_workers_ + outsiders_.size(); }
  std::size_t first_made(std::size_t i) const noexcept {
    while (i < num_workers_ && !workers_[i].made) ++i;
    return i;
  }
  slot& at(std::size_t i) const noexcept { return i < num_workers_ ? workers_[i] : *outsiders_[i - num_workers_]; }

  core_detail::runtime_core* core_;
  std::size_t num_workers_;
  std::unique_ptr<slot[]> workers_;
  std::function<T()> make_;
  std::uint64_t id_;
  mutable std::mutex m_;  // guards the outsiders' lists while local() adds to them
  std::vector<std::unique_ptr<slot>> outsiders_;
  std::vector<std::uint64_t> outsider_ids_;  // their threads' serials
};

template <class T>
template <bool Const>
class per_worker<T>::basic_iterator {
  using owner_t = std::conditional_t<Const, const per_worker, per_worker>;

 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = std::conditional_t<Const, const T*, T*>;
  using reference = std::conditional_t<Const, const T&, T&>;

  basic_iterator() noexcept = default;
  basic_iterator(owner_t* o, std::size_t i) noexcept : owner_(o), i_(i) {}
  // iterator converts to const_iterator
  // Formatted by hand: clang-format 14 misreads C++20 requires-clauses and requires-expressions.
  // clang-format off
  operator basic_iterator<true>() const noexcept
    requires(!Const)
  {
    return {owner_, i_};
  }
  // clang-format on

  reference operator*() const noexcept { return owner_->at(i_).value; }
  pointer operator->() const noexcept { return std::addressof(owner_->at(i_).value); }
  basic_iterator& operator++() noexcept {
    i_ = owner_->first_made(i_ + 1);
    return *this;
  }
  basic_iterator operator++(int) noexcept {
    basic_iterator old = *this;
    ++*this;
    return old;
  }
  friend bool operator==(const basic_iterator& a, const basic_iterator& b) noexcept { return a.i_ == b.i_; }

 private:
  owner_t* owner_ = nullptr;
  std::size_t i_ = 0;
};

}  // namespace heddle
