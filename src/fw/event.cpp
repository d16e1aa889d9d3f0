// SPDX-License-Identifier: Apache-2.0
// event, luminosity_block and run: reading and writing products through tokens, checked against the
// module's declarations.
#include "heddle/fw/event.hpp"
#include "heddle/fw/run.hpp"

#include <ostream>
#include <stdexcept>
#include <string>

#include "event_state.hpp"
#include "heddle/fw/errors.hpp"
#include "lumi_state.hpp"
#include "type_name.hpp"

namespace heddle::fw {

std::ostream& operator<<(std::ostream& out, const event_id& id) {
  return out << "run " << id.run << " lumi " << id.lumi << " event " << id.event;
}

namespace {
std::string text(const event_id& id) {
  return "event " + std::to_string(id.event) + " (run " + std::to_string(id.run) + ", lumi " + std::to_string(id.lumi) +
         ")";
}

std::string text(const luminosity_block_id& id) {
  return "lumi " + std::to_string(id.lumi) + " of run " + std::to_string(id.run);
}

[[noreturn]] void fw_bad_token(const fw_detail::node& n, const char* what, std::uint32_t index, std::size_t declared,
                               const char* who = "event") {
  throw std::logic_error("heddle::fw::" + std::string(who) + "::" + what + ": module '" + n.spec.label +
                         "' used a token (index " +
                         (index == fw_detail::no_index ? std::string("invalid") : std::to_string(index)) +
                         ") it did not get: it declared " + std::to_string(declared) +
                         "; a token is only valid in the module that declared it");
}

// What a token names, for the message of a call that got a token of another branch.
const char* branch_text(branch_type where) {
  switch (where) {
    case in_lumi:
      return "a luminosity-block product (declared in_lumi / at end_luminosity_block): it is read and made through "
             "luminosity_block in end_luminosity_block";
    case in_run: return "a run product (declared in_run / at end_run): it is read and made through run in end_run";
    default: return "an event product: it is read and made through the event";
  }
}

// A token of another kind of product (event, luminosity block, run) than the call reads or writes.
[[noreturn]] void wrong_branch(const fw_detail::node& n, const char* call, branch_type token) {
  throw std::logic_error("heddle::fw::" + std::string(call) + ": module '" + n.spec.label + "' used the token of " +
                         branch_text(token));
}

branch_type branch_of(transition when) {
  return when == transition::event ? in_event : when == transition::end_luminosity_block ? in_lumi : in_run;
}

// The products of a luminosity block or a run, as luminosity_block and run read and write them.
struct products_in {
  branch_type where;  // in_lumi or in_run
  const char* who;    // the class, for messages: "luminosity_block", "run"
  const char* begin;  // its transitions: "begin_luminosity_block", "end_luminosity_block"
  const char* end;
  const char* noun;        // "luminosity-block products"
  luminosity_block_id id;  // which lumi, or which run where id.lumi is 0

  // For messages only (a get or put that succeeds builds no string): "lumi 2 of run 1", "run 1".
  std::string at() const { return id.lumi ? text(id) : "run " + std::to_string(id.run); }

  const void* read(const fw_detail::graph& g, std::uint32_t module, const fw_detail::transition_products& state,
                   bool ending, std::uint32_t consumed, const std::type_info& type) const {
    const fw_detail::node& n = g.nodes[module];
    if (consumed >= n.consumed.size() || *n.declared().consumes[consumed].type != type)
      fw_bad_token(n, "get", consumed, n.consumed.size(), who);
    const branch_type token = n.declared().consumes[consumed].where;
    if (token != where) wrong_branch(n, (std::string(who) + "::get").c_str(), token);
    const std::uint32_t p = n.consumed[consumed];
    if (!state.made[p])
      throw product_error("module '" + n.spec.label + "' reads " + fw_detail::type_name(type) + " '" +
                          n.declared().consumes[consumed].tag.encode() + "' in " + at() + ", but module '" +
                          g.nodes[g.table_of(fw_detail::made_at(where))[p].module].spec.label +
                          "' did not make it there" +
                          (ending ? "" : std::string(" (yet: ") + noun + " are made in " + end + ")"));
    return &state.slots[p];
  }

  void* write(const fw_detail::graph& g, std::uint32_t module, fw_detail::transition_products& state, bool ending,
              std::uint32_t produced, const std::type_info& type) const {
    const fw_detail::node& n = g.nodes[module];
    if (produced >= n.products.size() || *n.declared().produces[produced].ops->type != type)
      fw_bad_token(n, "put", produced, n.products.size(), who);
    const transition when = n.declared().produces[produced].when;
    if (when != fw_detail::made_at(where)) wrong_branch(n, (std::string(who) + "::put").c_str(), branch_of(when));
    const std::uint32_t p = n.products[produced];
    if (!ending || state.made[p]) {
      const std::string& instance = g.table_of(when)[p].instance;
      const std::string what = fw_detail::type_name(type) + " '" + n.spec.label +
                               (instance.empty() ? "" : ":" + instance) + "'";
      if (!ending)
        throw product_error("module '" + n.spec.label + "' writes " + what + " in " + begin + " of " + at() + ": " +
                            noun + " are made in " + end);
      throw product_error("module '" + n.spec.label + "' writes " + what + " twice in " + at());
    }
    return &state.slots[p];
  }
};

products_in lumi_products(const luminosity_block_id& id) {
  return {in_lumi, "luminosity_block", "begin_luminosity_block", "end_luminosity_block", "luminosity-block products",
          id};
}
products_in run_products(std::uint32_t number) {
  return {in_run, "run", "begin_run", "end_run", "run products", {number, 0}};
}
}  // namespace

void event::bad_token(const char* what, std::uint32_t index) const {
  const fw_detail::node& n = graph_.nodes[module_];
  const bool get = what[0] == 'g';
  const std::size_t declared = get ? n.consumed.size() : n.products.size();
  if (index < declared &&
      (get ? n.declared().consumes[index].where != in_event : n.declared().produces[index].when != transition::event))
    wrong_branch(n, get ? "event::get" : "event::put",
                 get ? n.declared().consumes[index].where : branch_of(n.declared().produces[index].when));
  fw_bad_token(n, what, index, declared);
}

void event::not_made(std::uint32_t consumed) const {
  const fw_detail::node& n = graph_.nodes[module_];
  const fw_detail::product& made_by = graph_.products[n.consumed[consumed]];
  const fw_detail::consumed& c = n.declared().consumes[consumed];
  throw product_error("module '" + n.spec.label + "' reads " + fw_detail::type_name(*c.type) + " '" + c.tag.encode() +
                      "' in " + text(id_) + ", but module '" + graph_.nodes[made_by.module].spec.label +
                      "' did not make it there");
}

void event::made_twice(std::uint32_t produced) const {
  const fw_detail::node& n = graph_.nodes[module_];
  const std::string& instance = graph_.products[n.products[produced]].instance;
  throw product_error("module '" + n.spec.label + "' writes " +
                      fw_detail::type_name(*n.declared().produces[produced].ops->type) + " '" + n.spec.label +
                      (instance.empty() ? "" : ":" + instance) + "' twice in " + text(id_));
}

luminosity_block::luminosity_block(fw_detail::lumi_state& state, const fw_detail::graph& g, std::uint32_t module,
                                   bool ending) noexcept
    : state_(state), graph_(g), module_(module), ending_(ending), id_(state.id) {}

const void* luminosity_block::slot_to_read(std::uint32_t consumed, const std::type_info& type) const {
  return lumi_products(id_).read(graph_, module_, state_, ending_, consumed, type);
}

void* luminosity_block::slot_to_write(std::uint32_t produced, const std::type_info& type) {
  return lumi_products(id_).write(graph_, module_, state_, ending_, produced, type);
}

void luminosity_block::made(std::uint32_t produced) noexcept {
  state_.made[graph_.nodes[module_].products[produced]] = 1;
}

run::run(fw_detail::run_state& state, const fw_detail::graph& g, std::uint32_t module, bool ending) noexcept
    : state_(state), graph_(g), module_(module), ending_(ending), number_(state.number) {}

const void* run::slot_to_read(std::uint32_t consumed, const std::type_info& type) const {
  return run_products(number_).read(graph_, module_, state_, ending_, consumed, type);
}

void* run::slot_to_write(std::uint32_t produced, const std::type_info& type) {
  return run_products(number_).write(graph_, module_, state_, ending_, produced, type);
}

void run::made(std::uint32_t produced) noexcept { state_.made[graph_.nodes[module_].products[produced]] = 1; }

}  // namespace heddle::fw
