// SPDX-License-Identifier: Apache-2.0
// The conditions a module reads while it processes an event or a transition: data that changes
// rarely (calibrations, alignments, corrections), valid for an interval of runs and luminosity
// blocks. A module declares what it reads with es_consumes<T, Record>() and reads it with
// get(token), as CMS's EventSetup.
#pragma once

#include <cstdint>
#include <typeinfo>

#include "heddle/core/export.hpp"
#include "heddle/fw/tokens.hpp"

namespace heddle::fw_detail {
class graph;
class es_state;
struct event_access;
}  // namespace heddle::fw_detail

namespace heddle::fw {

class HEDDLE_EXPORT event_setup {
 public:
  event_setup(const event_setup&) = delete;
  event_setup& operator=(const event_setup&) = delete;

  // The data `token` names, for the interval of validity of the event or transition being
  // processed. Prefetched for events (costs a lookup); a transition may make it first. Throws
  // std::logic_error for an invalid token or one of another module, and the condition producer's
  // failure if it failed for this interval. Thread-safe, during the module's call (the setup is
  // valid only then, as the event is). In an event call the data is ready: it never waits for it;
  // in a transition it may run the condition producer on the calling thread, or block (sleep) until
  // another thread has made the data.
  template <class T, class R>
  const T& get(es_token<T, R> token) const {
    return *static_cast<const T*>(data(token.index(), typeid(T), typeid(R)));
  }

 private:
  friend struct fw_detail::event_access;
  event_setup(const fw_detail::graph& g, std::uint32_t module, fw_detail::es_state* es, std::uint32_t run,
              std::uint32_t lumi) noexcept
      : graph_(g), es_(es), module_(module), run_(run), lumi_(lumi) {}
  const void* data(std::uint32_t consumed, const std::type_info& type, const std::type_info& record) const;

  const fw_detail::graph& graph_;
  fw_detail::es_state* es_;
  std::uint32_t module_, run_, lumi_;
};

}  // namespace heddle::fw
