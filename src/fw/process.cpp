// SPDX-License-Identifier: Apache-2.0
// Building a process: its modules, paths and end paths as added (finalize.cpp checks and lays them
// out), the names of thread types and roles.
#include "heddle/fw/process.hpp"

#include <stdexcept>
#include <string>

#include "graph.hpp"

namespace heddle::fw_detail {
std::uint64_t hash_label(const std::string& s) noexcept {
  return fw::product_digest(s);  // FNV-1a, as a string product's digest
}
}  // namespace heddle::fw_detail

namespace heddle::fw {

process::process(std::string source) : source_(std::move(source)), graph_(std::make_unique<fw_detail::graph>()) {}
process::~process() = default;
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;

std::size_t process::num_modules() const noexcept { return graph_->nodes.size(); }
std::size_t process::num_paths() const noexcept { return graph_->paths.size(); }

const module_spec& process::spec(std::size_t i) const {
  if (i >= graph_->nodes.size())
    throw std::out_of_range("heddle::fw::process::spec: module " + std::to_string(i) + " of " +
                            std::to_string(graph_->nodes.size()));
  return graph_->nodes[i].spec;
}

const module_base& process::module(std::size_t i) const {
  if (i >= graph_->nodes.size())
    throw std::out_of_range("heddle::fw::process::module: module " + std::to_string(i) + " of " +
                            std::to_string(graph_->nodes.size()));
  return graph_->nodes[i].first();
}

module_base& process::add_module(module_spec spec, module_factory make) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_module: already finalized");
  std::unique_ptr<module_base> first = make ? make() : nullptr;
  if (!first) throw std::invalid_argument("heddle::fw::process::add_module: no module for '" + spec.label + "'");
  fw_detail::module_access::adopt(*first, spec.label);
  fw_detail::node n;
  n.spec = std::move(spec);
  n.make = std::move(make);
  n.role_ = first->role();
  n.kind_ = first->kind();
  n.instances.push_back(std::move(first));
  graph_->nodes.push_back(std::move(n));
  return graph_->nodes.back().first();
}

es_producer& process::add_es_producer(module_spec spec, std::unique_ptr<es_producer> producer) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_es_producer: already finalized");
  if (!producer)
    throw std::invalid_argument("heddle::fw::process::add_es_producer: no producer for '" + spec.label + "'");
  fw_detail::es_access::adopt(*producer, spec.label);
  fw_detail::es_node n;
  n.label = std::move(spec.label);
  n.type = std::move(spec.type);
  n.where = std::move(spec.where);
  n.impl = std::move(producer);
  graph_->es_nodes.push_back(std::move(n));
  return *graph_->es_nodes.back().impl;
}

void process::set_conditions(conditions c) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::set_conditions: already finalized");
  graph_->source = std::move(c);
}

}  // namespace heddle::fw

namespace heddle::fw_detail {
const graph& graph_of(const fw::process& p) {
  if (!p.graph_->finalized) throw std::logic_error("heddle::fw_detail::graph_of: finalize() first");
  return *p.graph_;
}

void prepare_streams(const graph& g, unsigned streams) {
  for (const node& n : g.nodes) {
    if (n.kind() != module_kind::stream) continue;
    while (n.instances.size() < streams) {
      std::unique_ptr<module_base> m = n.make();
      if (!m)
        throw config_error(n.spec.label + ": its factory made no module for stream " +
                           std::to_string(n.instances.size()));
      const declarations &a = module_access::declared(*m), &b = n.declared();
      bool same = a.consumes.size() == b.consumes.size() && a.produces.size() == b.produces.size() &&
                  a.es_consumes.size() == b.es_consumes.size() && a.resources == b.resources;
      for (std::size_t i = 0; same && i < a.consumes.size(); ++i)
        same = a.consumes[i].tag == b.consumes[i].tag && *a.consumes[i].type == *b.consumes[i].type &&
               a.consumes[i].where == b.consumes[i].where;
      for (std::size_t i = 0; same && i < a.produces.size(); ++i)
        same = a.produces[i].instance == b.produces[i].instance &&
               *a.produces[i].ops->type == *b.produces[i].ops->type && a.produces[i].when == b.produces[i].when;
      if (!same)
        throw config_error(n.spec.label + ": stream " + std::to_string(n.instances.size()) +
                           "'s instance declares other products than stream 0's (each instance must declare the same)");
      module_access::adopt(*m, n.spec.label);
      n.instances.push_back(std::move(m));
    }
  }
}
}  // namespace heddle::fw_detail

namespace heddle::fw {

void process::add_path(std::string name, std::vector<std::string> filters) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_path: already finalized");
  fw_detail::path p;
  p.name = std::move(name);
  p.hash = fw_detail::hash_label("path:" + p.name);
  graph_->paths.push_back(std::move(p));
  pending_labels_.push_back(std::move(filters));
}

void process::add_end_path(std::string name, std::vector<std::string> outputs) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_end_path: already finalized");
  fw_detail::path p;
  p.name = std::move(name);
  p.hash = fw_detail::hash_label("endpath:" + p.name);
  graph_->end_paths.push_back(std::move(p));
  pending_end_labels_.push_back(std::move(outputs));
}

}  // namespace heddle::fw
