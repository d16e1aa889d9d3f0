// SPDX-License-Identifier: Apache-2.0
// Parts of the layers above the core that live as long as one runtime, such as the async engines
// with their service threads. A runtime makes each on first use and stops them when it stops.
#pragma once

#include <cstdint>
#include <memory>

#include "heddle/core/export.hpp"

namespace heddle::core_detail {

class runtime_core;

class HEDDLE_EXPORT runtime_service {
 public:
  virtual ~runtime_service() = default;
  // The runtime is stopping and its workers have exited: cancel or finish what is pending and join
  // the service's threads. Successors queued from here are discarded (their futures fail with
  // task_cancelled); none runs.
  virtual void stop() noexcept = 0;
};

using service_factory = std::unique_ptr<runtime_service> (*)(runtime_core*);

// A process-wide slot number for one kind of service; take it once into a function-local static.
HEDDLE_EXPORT unsigned new_service_id();
// The service in slot `id` of `core`, made by `make` on first use (once, even under a race).
// Throws task_cancelled once the runtime is stopping.
HEDDLE_EXPORT runtime_service& service(runtime_core* core, unsigned id, service_factory make);
// True once the runtime's destructor has begun.
HEDDLE_EXPORT bool core_stopping(const runtime_core* core) noexcept;

}  // namespace heddle::core_detail
