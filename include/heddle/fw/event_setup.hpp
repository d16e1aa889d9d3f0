// The conditions a module reads while it processes an event or a transition: data that changes
// rarely (calibrations, alignments, corrections), valid for an interval of runs and luminosity
// blocks. A module declares what it reads with es_consumes<T, Record>() and reads it with
// get(token), as CMS's EventSetup.
#pragma once

#include <cstdint>
#include <typeinfo>

#include "heddle/core/export.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw {

namespace detail {
class graph;
struct event_access;
}  // namespace detail

class HEDDLE_EXPORT event_setup {
 public:
  event_setup(const event_setup&) = delete;
  event_setup& operator=(const event_setup&) = delete;

  // The data `token` names, valid for the event or transition being processed. Throws
  // std::logic_error for an invalid token or one of another module.
  template <class T, class R>
  const T& get(es_token<T, R> token) const {
    return *static_cast<const T*>(data(token.index(), typeid(T), typeid(R)));
  }

 private:
  friend struct detail::event_access;
  event_setup(const detail::graph& g, std::uint32_t module) noexcept : graph_(g), module_(module) {}
  const void* data(std::uint32_t consumed, const std::type_info& type, const std::type_info& record) const;

  const detail::graph& graph_;
  std::uint32_t module_;
};

}  // namespace heddle::fw
