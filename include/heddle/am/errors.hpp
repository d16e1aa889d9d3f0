// SPDX-License-Identifier: Apache-2.0
// Errors of the active-message layer. Every one that concerns another node names it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "heddle/am/functor.hpp"    // unknown_handler
#include "heddle/am/serialize.hpp"  // decode_error
#include "heddle/core/export.hpp"

namespace heddle::offload {

using node_id = std::uint32_t;

// Something went wrong with another node; node() says which.
class HEDDLE_EXPORT peer_error : public std::runtime_error {
 public:
  ~peer_error() override;
  peer_error(node_id node, const std::string& what) : std::runtime_error(what), node_(node) {}
  node_id node() const noexcept { return node_; }

 private:
  node_id node_;
};

// The node died, closed its connection, or sent something this process cannot trust (a corrupt
// frame): every call waiting on it fails with this, and later calls to it fail at once.
class HEDDLE_EXPORT peer_lost : public peer_error {
 public:
  ~peer_lost() override;
  using peer_error::peer_error;
};

// The node was built from a different set of handlers: the two would disagree on indices.
class HEDDLE_EXPORT registry_mismatch : public peer_error {
 public:
  ~registry_mismatch() override;
  using peer_error::peer_error;
};

// The remote handler threw: what() has the node, the handler and the exception's type and text.
class HEDDLE_EXPORT remote_error : public peer_error {
 public:
  ~remote_error() override;
  using peer_error::peer_error;
};

// No session, a session already open, a bad launch setting (what and where), or a session that
// ended while a call still waited.
class HEDDLE_EXPORT session_error : public std::runtime_error {
 public:
  ~session_error() override;
  using std::runtime_error::runtime_error;
};

}  // namespace heddle::offload

// The am layer's internals (heddle::am_detail) name these unqualified.
namespace heddle::am_detail {
using offload::node_id;
using offload::peer_error;
using offload::peer_lost;
using offload::registry_mismatch;
using offload::remote_error;
using offload::session_error;
}  // namespace heddle::am_detail
