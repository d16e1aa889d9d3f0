// event: reading and writing products through tokens, checked against the module's declarations.
#include "heddle/fw/event.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

#include "event_state.hpp"
#include "lumi_state.hpp"
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

std::string text(const luminosity_block_id& id) {
  return "lumi " + std::to_string(id.lumi) + " of run " + std::to_string(id.run);
}

[[noreturn]] void fw_bad_token(const detail::node& n, const char* what, std::uint32_t index, std::size_t declared,
                            const char* who = "event") {
  throw std::logic_error("heddle::fw::" + std::string(who) + "::" + what + ": module '" + n.spec.label + "' used a token (index " +
                         (index == detail::no_index ? std::string("invalid") : std::to_string(index)) + ") it did not get: it declared " +
                         std::to_string(declared) + "; a token is only valid in the module that declared it");
}

// A token of the other kind of product (event or luminosity block) than the call reads or writes.
[[noreturn]] void wrong_branch(const detail::node& n, const char* call, bool lumi_token) {
  throw std::logic_error("heddle::fw::" + std::string(call) + ": module '" + n.spec.label + "' used the token of " +
                         (lumi_token ? "a luminosity-block product (declared in_lumi / at end_luminosity_block): it "
                                       "is read and made through luminosity_block in end_luminosity_block"
                                     : "an event product: it is read and made through the event"));
}
}  // namespace

void event::bad_token(const char* what, std::uint32_t index) const {
  const detail::node& n = graph_.nodes[module_];
  const bool get = what[0] == 'g';
  const std::size_t declared = get ? n.consumed.size() : n.products.size();
  if (index < declared && (get ? n.declared().consumes[index].where != in_event
                               : n.declared().produces[index].when != transition::event))
    wrong_branch(n, get ? "event::get" : "event::put", true);
  fw_bad_token(n, what, index, declared);
}

void event::not_made(std::uint32_t consumed) const {
  const detail::node& n = graph_.nodes[module_];
  const detail::product& made_by = graph_.products[n.consumed[consumed]];
  const detail::consumed& c = n.declared().consumes[consumed];
  throw product_error("module '" + n.spec.label + "' reads " + detail::type_name(*c.type) + " '" + c.tag.encode() + "' in " +
                      text(id_) + ", but module '" + graph_.nodes[made_by.module].spec.label + "' did not make it there");
}

void event::made_twice(std::uint32_t produced) const {
  const detail::node& n = graph_.nodes[module_];
  const std::string& instance = graph_.products[n.products[produced]].instance;
  throw product_error("module '" + n.spec.label + "' writes " + detail::type_name(*n.declared().produces[produced].ops->type) +
                      " '" + n.spec.label + (instance.empty() ? "" : ":" + instance) + "' twice in " + text(id_));
}

luminosity_block::luminosity_block(detail::lumi_state& state, const detail::graph& g, std::uint32_t module, bool ending) noexcept
    : state_(state), graph_(g), module_(module), ending_(ending), id_(state.id) {}

const void* luminosity_block::slot_to_read(std::uint32_t consumed, const std::type_info& type) const {
  const detail::node& n = graph_.nodes[module_];
  if (consumed >= n.consumed.size() || *n.declared().consumes[consumed].type != type)
    fw_bad_token(n, "get", consumed, n.consumed.size(), "luminosity_block");
  if (n.declared().consumes[consumed].where != in_lumi) wrong_branch(n, "luminosity_block::get", false);
  const std::uint32_t p = n.consumed[consumed];
  const detail::product& q = graph_.lumi_products[p];
  if (!state_.made[p])
    throw product_error("module '" + n.spec.label + "' reads " + detail::type_name(type) + " '" +
                        n.declared().consumes[consumed].tag.encode() + "' in " + text(id_) + ", but module '" +
                        graph_.nodes[q.module].spec.label + "' did not make it there" +
                        (ending_ ? "" : " (yet: luminosity-block products are made in end_luminosity_block)"));
  return &state_.slots[p];
}

void* luminosity_block::slot_to_write(std::uint32_t produced, const std::type_info& type) {
  const detail::node& n = graph_.nodes[module_];
  if (produced >= n.products.size() || *n.declared().produces[produced].ops->type != type)
    fw_bad_token(n, "put", produced, n.products.size(), "luminosity_block");
  if (n.declared().produces[produced].when != transition::end_luminosity_block)
    wrong_branch(n, "luminosity_block::put", false);
  const std::uint32_t p = n.products[produced];
  const std::string& instance = graph_.lumi_products[p].instance;
  const std::string what = detail::type_name(type) + " '" + n.spec.label + (instance.empty() ? "" : ":" + instance) + "'";
  if (!ending_)
    throw product_error("module '" + n.spec.label + "' writes " + what + " in begin_luminosity_block of " + text(id_) +
                        ": luminosity-block products are made in end_luminosity_block");
  if (state_.made[p]) throw product_error("module '" + n.spec.label + "' writes " + what + " twice in " + text(id_));
  return &state_.slots[p];
}

void luminosity_block::made(std::uint32_t produced) noexcept { state_.made[graph_.nodes[module_].products[produced]] = 1; }

}  // namespace heddle::fw
