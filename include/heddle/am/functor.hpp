// SPDX-License-Identifier: Apache-2.0
// What an active message carries: a call of a function known at compile time, with its arguments
// serialised. `heddle::f2f<&scale>(1, std::string("x"))` makes a functor whose type holds the
// function's address (HAM's scheme), so the receiver needs no function pointer from the wire: the
// message names a handler by its index in a registry that every process builds the same way.
//
// The registry: every functor type ever instantiated in the program registers a handler under its
// type's name during static initialisation; seal() sorts the names, so that every process built
// from the same sources agrees on the indices without talking, and hashes them, so that two peers
// can refuse each other when they were built from different sources.
//
// Thread safety: a functor is a value: f2f() and a functor's const calls are thread-safe (operator()
// as much as the function it calls); the registry is complete once static initialisation is over,
// and only read after that (its seal() takes a lock once).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "heddle/am/serialize.hpp"
#include "heddle/core/export.hpp"

namespace heddle::offload {

class HEDDLE_EXPORT unknown_handler : public std::runtime_error {
 public:
  ~unknown_handler() override;
  using std::runtime_error::runtime_error;
};

}  // namespace heddle::offload

namespace heddle::am_detail {

// A compiler-made name for T, the same in every process built by the same compiler.
template <class T>
constexpr std::string_view type_name() noexcept {
  constexpr std::string_view f = __PRETTY_FUNCTION__;  // "... type_name() [with T = NAME; ...]"
  constexpr std::size_t start = f.find("T = ") + 4;
  constexpr std::size_t end = f.find_first_of(";]", start);
  return f.substr(start, end - start);
}

// Reads the arguments from `args`, runs the call, writes its result (nothing for void) to `result`.
using handler_fn = void (*)(reader& args, writer& result);

using offload::unknown_handler;  // what the registry throws for a name or an index it lacks

class HEDDLE_EXPORT registry {
 public:
  // The process's one registry, made on first use (during static initialisation). Defined in the am
  // library, not inline: an inline function's static would be one per shared object, and handlers
  // registered by a plugin would land in a registry the library never reads.
  static registry& instance();

  // During static initialisation, once per functor type; returns true to initialise a flag.
  bool add(std::string_view name, handler_fn fn) {
    std::lock_guard lock(m_);
    if (sealed_.load(std::memory_order_relaxed))
      throw std::logic_error("heddle::offload: a handler registered after the registry was sealed");
    entries_.push_back({name, fn});
    return true;
  }

  // Sorts the handlers by name (duplicates, from the same functor type in several translation
  // units, collapse) and fixes their indices and the registry's hash. Idempotent.
  void seal() {
    if (sealed_.load(std::memory_order_acquire)) [[likely]]
      return;  // the entries never change once sealed: no lock on the dispatch path
    std::lock_guard lock(m_);
    if (sealed_.load(std::memory_order_relaxed)) return;
    std::sort(entries_.begin(), entries_.end(), [](const entry& a, const entry& b) { return a.name < b.name; });
    entries_.erase(std::unique(entries_.begin(), entries_.end(),
                               [](const entry& a, const entry& b) { return a.name == b.name; }),
                   entries_.end());
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the names, each ended by a zero byte
    for (const entry& e : entries_) {
      for (unsigned char c : e.name) h = (h ^ c) * 0x100000001b3ull;
      h = (h ^ 0) * 0x100000001b3ull;
    }
    hash_ = h;
    sealed_.store(true, std::memory_order_release);
  }

  std::size_t size() const noexcept { return entries_.size(); }
  std::uint64_t hash() {
    seal();
    return hash_;
  }

  std::uint32_t index_of(std::string_view name) {
    seal();
    auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                               [](const entry& e, std::string_view n) { return e.name < n; });
    if (it == entries_.end() || it->name != name)
      throw unknown_handler("heddle::offload: no handler registered for " + std::string(name));
    return static_cast<std::uint32_t>(it - entries_.begin());
  }

  // The handler at `index`, bounds-checked: an index from the wire is not trusted.
  handler_fn at(std::uint32_t index) {
    seal();
    if (index >= entries_.size())
      throw unknown_handler("heddle::offload: unknown handler index " + std::to_string(index) + " (this process has " +
                            std::to_string(entries_.size()) + ")");
    return entries_[index].fn;
  }
  // The functor type's name at `index` (for error messages), or "?" out of range.
  std::string_view name(std::uint32_t index) {
    seal();
    return index < entries_.size() ? entries_[index].name : std::string_view("?");
  }

 private:
  struct entry {
    std::string_view name;
    handler_fn fn;
  };
  std::mutex m_;
  std::vector<entry> entries_;
  std::uint64_t hash_ = 0;
  std::atomic<bool> sealed_{false};
};

template <class T>
inline constexpr bool travels_v = !std::is_pointer_v<std::remove_cvref_t<T>> &&
                                  !(std::is_reference_v<T> &&
                                    !std::is_const_v<std::remove_reference_t<T>>)&&!std::is_rvalue_reference_v<T>;

}  // namespace heddle::am_detail

namespace heddle::offload {

template <class F, F Fn>
class function_call;

// A call of `Fn` with its arguments stored by value (the function's parameter types, decayed).
template <class R, class... P, R (*Fn)(P...)>
class function_call<R (*)(P...), Fn> {
  static_assert((am_detail::travels_v<P> && ...),
                "heddle::f2f: a function called remotely takes its parameters by value or const reference: a pointer "
                "or a non-const reference would point into the caller's memory");
  static_assert(!std::is_pointer_v<R> && !std::is_reference_v<R>,
                "heddle::f2f: a function called remotely returns a value, not a pointer or a reference");

 public:
  using result_type = R;
  using args_type = std::tuple<std::remove_cvref_t<P>...>;

  template <class... A>
  explicit function_call(A&&... a) : args_(std::forward<A>(a)...) {
    (void)registered_;  // odr-used: making a functor of this type registers its handler
  }

  // The handler's index in this process's registry. Thread-safe (after static initialisation).
  static std::uint32_t index() {
    (void)registered_;
    static const std::uint32_t i = am_detail::registry::instance().index_of(am_detail::type_name<function_call>());
    return i;
  }

  // Appends the arguments to `w` (the calling thread's writer). Thread-safe.
  void write_args(writer& w) const { offload::write(w, args_); }
  // Runs the call here (the loopback's and the tests' way). Thread-safe as the function is.
  R operator()() const { return std::apply(Fn, args_); }

  // What the registry runs on the target.
  static void handle(reader& args, writer& result) {
    args_type a = offload::read<args_type>(args);
    args.expect_end("arguments");
    if constexpr (std::is_void_v<R>) {
      std::apply(Fn, std::move(a));
    } else {
      offload::write(result, std::apply(Fn, std::move(a)));
    }
  }

 private:
  // Registers `handle` during static initialisation, for every functor type the program makes.
  inline static const bool registered_ = am_detail::registry::instance().add(am_detail::type_name<function_call>(),
                                                                             &handle);
  args_type args_;
};

// Decodes a result written by a handler.
template <class R>
R read_result(reader& r) {
  if constexpr (std::is_void_v<R>) return;
  else return offload::read<R>(r);
}

}  // namespace heddle::offload

namespace heddle {

namespace am_detail {
// True for the address of a non-member function that is not noexcept: what function_call is made for.
template <class F>
inline constexpr bool plain_function_pointer_v = false;
template <class R, class... P>
inline constexpr bool plain_function_pointer_v<R (*)(P...)> = true;
}  // namespace am_detail

// heddle::f2f<&fn>(args...): a call of `fn` with `args`, to hand to offload::async, sync or ping (or
// to run here with operator()). HAM writes f2f(&fn, args...); C++ cannot turn a function argument
// into a template argument, so the address is the template argument, and the functor's type,
// offload::function_call<decltype(&fn), &fn>, names the function: a message carries the index of that
// type's handler, never a function pointer, and no table is searched per call. An overloaded `fn` is
// named by the overload's type: heddle::f2f<static_cast<int (*)(int)>(&fn)>(1).
//
// `fn` takes its parameters by value or const reference and returns a value or void; a pointer or a
// non-const reference does not compile, nor does a member function, a lambda or a noexcept function
// (name it as a plain pointer: static_cast<int (*)(int)>(&fn)). The arguments are converted to the
// parameters' decayed types and stored in the functor (copied or moved, as passed); nothing else is
// allocated, and they are serialised only when the call is made. Throws what constructing the stored
// arguments throws. The result type is deduced only so that the static_assert below is the first
// error a wrong Fn draws, not an incomplete function_call. Thread-safe.
template <auto Fn, class... A>
[[nodiscard]] auto f2f(A&&... a) {
  static_assert(am_detail::plain_function_pointer_v<decltype(Fn)>,
                "heddle::f2f<Fn>: Fn is the address of a non-member function that is not noexcept, as in "
                "heddle::f2f<&fn>(args...); for an overloaded or noexcept fn, name its plain pointer type: "
                "heddle::f2f<static_cast<int (*)(int)>(&fn)>(1)");
  return offload::function_call<decltype(Fn), Fn>(std::forward<A>(a)...);
}

}  // namespace heddle
