// SPDX-License-Identifier: Apache-2.0
// module_base's declarations and the kinds' shared defaults.
#include "heddle/fw/module_base.hpp"

#include <algorithm>
#include <stdexcept>

#include "heddle/fw/abilities.hpp"  // ExternalWork's out-of-line parts
#include "type_name.hpp"

namespace heddle::fw {

module_base::~module_base() = default;

const char* to_string(module_kind k) noexcept {
  switch (k) {
    case module_kind::global: return "global";
    case module_kind::stream: return "stream";
    case module_kind::one: return "one";
  }
  return "?";
}

const char* to_string(module_role r) noexcept {
  switch (r) {
    case module_role::producer: return "producer";
    case module_role::filter: return "filter";
    case module_role::analyzer: return "analyzer";
    case module_role::output: return "output module";
  }
  return "?";
}

void module_base::check_open(const char* what) const {
  if (declared_.frozen)
    throw std::logic_error(std::string("heddle::fw::module_base::") + what + ": module '" + label_ +
                           "' is in a process already: declare in the constructor");
}

std::uint32_t module_base::declare_consumes(input_tag tag, const std::type_info& type, branch_type where) {
  check_open("consumes");
  declared_.consumes.push_back({std::move(tag), &type, where});
  return static_cast<std::uint32_t>(declared_.consumes.size() - 1);
}

std::uint32_t module_base::declare_produces(std::string instance, const fw_detail::product_ops* ops, transition when) {
  check_open("produces");
  if (when != transition::event && kind_ == module_kind::stream)
    throw std::logic_error("heddle::fw::module_base::produces: " + fw_detail::type_name(*ops->type) + " instance '" +
                           instance + "': a stream module cannot make a " +
                           (when == transition::end_run ? "run" : "luminosity-block") +
                           " product (each of its instances would make it); make it in a global:: or one:: module");
  for (const fw_detail::produced& p : declared_.produces)
    if (p.instance == instance && *p.ops->type == *ops->type)
      throw std::logic_error("heddle::fw::module_base::produces: " + fw_detail::type_name(*ops->type) + " instance '" +
                             instance + "' declared twice");
  declared_.produces.push_back({std::move(instance), ops, when});
  return static_cast<std::uint32_t>(declared_.produces.size() - 1);
}

std::uint32_t module_base::declare_es_consumes(const std::type_info& type, const std::type_info& record,
                                               std::string label) {
  check_open("es_consumes");
  declared_.es_consumes.push_back({&type, &record, std::move(label)});
  return static_cast<std::uint32_t>(declared_.es_consumes.size() - 1);
}

void module_base::declare_resource(std::string name) {
  check_open("uses_resource");
  if (kind_ != module_kind::one)
    throw std::logic_error("heddle::fw::module_base: only one:: modules use shared resources");
  auto& r = declared_.resources;
  auto at = std::lower_bound(r.begin(), r.end(), name);
  if (at == r.end() || *at != name) r.insert(at, std::move(name));
}

}  // namespace heddle::fw

namespace heddle::fw_detail {

void acquire_through_future(async_handle& handle, future<void>&& f) { handle.after(std::move(f)); }

void no_acquire(const module_base& m) {
  throw std::logic_error("module '" + m.label() + "' is ExternalWork but overrides neither acquire()");
}

}  // namespace heddle::fw_detail
