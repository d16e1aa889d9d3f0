// SPDX-License-Identifier: Apache-2.0
// The framework's side of module_base and event: what the processors call and set that a module
// itself must not (its label, its declarations once frozen, its event methods through the kind).
#pragma once

#include <string>
#include <utility>

#include "heddle/fw/es_producer.hpp"
#include "heddle/fw/module_base.hpp"

namespace heddle::fw_detail {

struct module_access {
  static const declarations& declared(const module_base& m) noexcept { return m.declared_; }
  // Added to a process as `label`: its declarations are final.
  static void adopt(module_base& m, const std::string& label) {
    m.label_ = label;
    m.declared_.frozen = true;
  }
  static bool call(module_base& m, event& e, const event_setup& setup) { return m.call(e, setup); }
  static void set_job_failed(module_base& m, bool failed) noexcept { m.job_failed_ = failed; }
  static void acquire(module_base& m, const event& e, const event_setup& setup, async_handle h) {
    m.call_acquire(e, setup, std::move(h));
  }
};

struct es_access {
  static const std::vector<es_produced>& declared(const es_producer& p) noexcept { return p.produced_; }
  static void adopt(es_producer& p, const std::string& label) {
    p.label_ = label;
    p.frozen_ = true;
  }
  static void produce(const es_producer& p, es_cell& cell, iov_start start, const parameter_set& payload) {
    es_context c(p, cell, start, payload);
    p.produce(c);
  }
};

}  // namespace heddle::fw_detail
