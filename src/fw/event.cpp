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
}  // namespace

void event::bad_token(const char* what, std::uint32_t index) const {
  const detail::node& n = graph_.nodes[module_];
  const std::size_t declared = what[0] == 'g' ? n.consumed.size() : n.products.size();
  throw std::logic_error("heddle::fw::event::" + std::string(what) + ": module '" + n.spec.label + "' used a token (index " +
                         (index == detail::no_index ? std::string("invalid") : std::to_string(index)) + ") it did not get: it declared " +
                         std::to_string(declared) + "; a token is only valid in the module that declared it, with its type");
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

}  // namespace heddle::fw
