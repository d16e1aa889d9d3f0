// event: reading and writing products through tokens, checked against the module's declarations.
#include "heddle/fw/event.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

#include "event_state.hpp"
#include "heddle/fw/errors.hpp"
#include "type_name.hpp"

namespace heddle::fw {

std::ostream& operator<<(std::ostream& out, const event_id& id) {
  return out << "run " << id.run << " lumi " << id.lumi << " event " << id.event;
}

namespace {
std::string text(const event_id& id) {
  return "event " + std::to_string(id.event) + " (run " + std::to_string(id.run) + ", lumi " + std::to_string(id.lumi) + ")";
}

[[noreturn]] void bad_token(const detail::node& n, const char* what, std::uint32_t index, std::size_t declared) {
  throw std::logic_error("heddle::fw::event::" + std::string(what) + ": module '" + n.spec.label + "' used a token (index " +
                         (index == detail::no_index ? std::string("invalid") : std::to_string(index)) + ") it did not get: it declared " +
                         std::to_string(declared) + "; a token is only valid in the module that declared it");
}
}  // namespace

const void* event::slot_to_read(std::uint32_t consumed, const std::type_info& type) const {
  const detail::node& n = graph_.nodes[module_];
  if (consumed >= n.consumed.size() || *n.declared().consumes[consumed].type != type)
    bad_token(n, "get", consumed, n.consumed.size());
  const std::uint32_t p = n.consumed[consumed];
  if (!state_.is_made(p)) {
    const detail::product& made_by = graph_.products[p];
    throw product_error("module '" + n.spec.label + "' reads " + detail::type_name(type) + " '" +
                        n.declared().consumes[consumed].tag.encode() + "' in " + text(id_) + ", but module '" +
                        graph_.nodes[made_by.module].spec.label + "' did not make it there");
  }
  return graph_.products[p].ops->in_place ? static_cast<const void*>(&state_.slots[p]) : state_.slots[p];
}

void* event::slot_to_write(std::uint32_t produced, const std::type_info& type) {
  const detail::node& n = graph_.nodes[module_];
  if (produced >= n.products.size() || *n.declared().produces[produced].ops->type != type)
    bad_token(n, "put", produced, n.products.size());
  const std::uint32_t p = n.products[produced];
  if (state_.is_made(p)) {
    const std::string& instance = graph_.products[p].instance;
    throw product_error("module '" + n.spec.label + "' writes " + detail::type_name(type) + " '" + n.spec.label +
                        (instance.empty() ? "" : ":" + instance) + "' twice in " + text(id_));
  }
  return &state_.slots[p];
}

void event::made(std::uint32_t produced) noexcept { state_.mark_made(graph_.nodes[module_].products[produced]); }

}  // namespace heddle::fw
