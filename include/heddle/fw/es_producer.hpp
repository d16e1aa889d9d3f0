// SPDX-License-Identifier: Apache-2.0
// Condition producers: code that makes a record's data for one interval of validity, from the
// interval's payload (conditions.hpp), on demand: the first event or transition that needs the data
// in an interval makes it, once; the framework prefetches it for the modules that declared they read
// it (es_consumes), so that their event calls never wait for it. CMS's ESProducer.
//
//   struct JetRecord {};
//   class CorrectionsProducer : public heddle::fw::es_producer {
//    public:
//     explicit CorrectionsProducer(const heddle::fw::parameter_set&) : token_(es_produces<Corrections, JetRecord>()) {}
//     void produce(heddle::fw::es_context& c) const override {
//       c.emplace(token_, c.payload().get<std::vector<double>>("scale"));
//     }
//    private:
//     heddle::fw::es_put_token<Corrections, JetRecord> token_;
//   };
//   HEDDLE_FW_MODULE(CorrectionsProducer);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "heddle/core/export.hpp"
#include "heddle/fw/conditions.hpp"
#include "heddle/fw/detail/product_ops.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

class es_producer;

}  // namespace heddle::fw

namespace heddle::fw_detail {
struct es_access;
struct es_cell;
struct es_produced {
  std::string label;
  const std::type_info* record;
  const product_ops* ops;
};
}  // namespace heddle::fw_detail

namespace heddle::fw {

// Writes conditions data T of record R: es_context::emplace / put.
template <class T, class R>
class es_put_token {
 public:
  es_put_token() = default;
  // Thread-safe, both (a plain value).
  bool valid() const noexcept { return index_ != fw_detail::no_index; }
  std::uint32_t index() const noexcept { return index_; }

 private:
  friend class es_producer;
  explicit es_put_token(std::uint32_t i) noexcept : index_(i) {}
  std::uint32_t index_ = fw_detail::no_index;
};

// What a condition producer sees while it makes its record's data for one interval.
class HEDDLE_EXPORT es_context {
 public:
  es_context(const es_context&) = delete;
  es_context& operator=(const es_context&) = delete;

  // The interval's start and its payload from the conditions source (empty without one).
  // Thread-safe, during produce (the context is valid only then).
  const iov_start& start() const noexcept { return start_; }
  const parameter_set& payload() const noexcept { return payload_; }

  // Makes the data `token` names for this interval (a producer makes each item it declared).
  // std::logic_error for a token of another producer or an item made twice; what T's constructor
  // throws. Costs one allocation. Not thread-safe: produce's own call (or one task of it at a
  // time); never waits.
  template <class T, class R, class... A>
  T& emplace(es_put_token<T, R> token, A&&... args) {
    check(token.index(), typeid(T));
    auto box = std::make_unique<T>(std::forward<A>(args)...);
    T& data = *box;
    store(token.index(), box.release(), [](void* p) noexcept { delete static_cast<T*>(p); });
    return data;
  }
  // emplace(token, std::move(value)), with its thread safety.
  template <class T, class R>
  void put(es_put_token<T, R> token, T value) {
    emplace(token, std::move(value));
  }

 private:
  friend struct fw_detail::es_access;
  es_context(const es_producer& producer, fw_detail::es_cell& cell, iov_start start,
             const parameter_set& payload) noexcept
      : producer_(producer), cell_(cell), start_(start), payload_(payload) {}
  void check(std::uint32_t index, const std::type_info& type) const;
  void store(std::uint32_t index, void* data, void (*destroy)(void*) noexcept);

  const es_producer& producer_;
  fw_detail::es_cell& cell_;
  iov_start start_;
  const parameter_set& payload_;
};

// Made from its parameters (registered with HEDDLE_FW_MODULE like modules) or added in C++
// (process::add_es_producer). A producer makes data of one record; produce() makes every item it
// declared, for one interval, and may run concurrently for different intervals (never twice for
// one): it is const.
class HEDDLE_EXPORT es_producer {
 public:
  virtual ~es_producer();
  es_producer(const es_producer&) = delete;
  es_producer& operator=(const es_producer&) = delete;

  // Makes the record's data for one interval (es_context). An exception fails every module that
  // needed the data: the job stops, naming this producer, the record and the interval. The
  // framework calls it on its threads (module_base.hpp), for several intervals at once (const:
  // thread-safe), never twice for one: for events as a task of its own, before the modules that
  // read the data run; for a transition that needs it first, on the transition's thread.
  virtual void produce(es_context& c) const = 0;

  // The producer's label in its process ("" until it is added to one). Thread-safe once it is.
  const std::string& label() const noexcept { return label_; }

 protected:
  es_producer() = default;
  // Declares that this producer makes T of record R (labelled `label` where a record holds
  // several T). In the constructor only (std::logic_error once in a process: the constructing
  // thread's call, not thread-safe); every declaration of one producer names the same record
  // (std::logic_error otherwise).
  template <class T, class R>
  es_put_token<T, R> es_produces(std::string label = {}) {
    return es_put_token<T, R>(declare(std::move(label), typeid(R), &fw_detail::ops_of<T>));
  }

 private:
  friend struct fw_detail::es_access;
  std::uint32_t declare(std::string label, const std::type_info& record, const fw_detail::product_ops* ops);

  std::string label_;
  std::vector<fw_detail::es_produced> produced_;
  bool frozen_ = false;
};

}  // namespace heddle::fw

// The fw layer's internals (heddle::fw_detail) name these unqualified.
namespace heddle::fw_detail {
using fw::es_context;
using fw::es_producer;
}  // namespace heddle::fw_detail
