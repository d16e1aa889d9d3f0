// Building a process: its modules, paths and end paths as added (finalize.cpp checks and lays them
// out), the names of thread types and roles.
#include "heddle/fw/process.hpp"

#include <stdexcept>
#include <string>

#include "graph.hpp"

namespace heddle::fw {

namespace detail {
std::uint64_t hash_label(const std::string& s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
}  // namespace detail

const char* to_string(thread_type t) noexcept {
  switch (t) {
    case thread_type::safe_between_instances: return "ThreadSafeBetweenInstances";
    case thread_type::safe_between_modules: return "ThreadSafeBetweenModules";
    case thread_type::unsafe: return "ThreadUnsafe";
  }
  return "?";
}

const char* to_string(module_role r) noexcept {
  switch (r) {
    case module_role::producer: return "producer";
    case module_role::filter: return "filter";
    case module_role::output: return "output module";
  }
  return "?";
}

process::process(std::string source) : source_(std::move(source)), graph_(std::make_unique<detail::graph>()) {}
process::~process() = default;
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;

std::size_t process::num_modules() const noexcept { return graph_->nodes.size(); }
std::size_t process::num_paths() const noexcept { return graph_->paths.size(); }

const module_decl& process::declaration(std::size_t i) const {
  if (i >= graph_->nodes.size())
    throw std::out_of_range("heddle::fw::process::declaration: module " + std::to_string(i) + " of " +
                            std::to_string(graph_->nodes.size()));
  return graph_->nodes[i].decl;
}

const detail::graph& detail::graph_of(const process& p) {
  if (!p.graph_->finalized) throw std::logic_error("heddle::fw::detail::graph_of: finalize() first");
  return *p.graph_;
}

void process::add_module(module_decl decl, std::unique_ptr<module> impl) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_module: already finalized");
  if (!impl) throw std::invalid_argument("heddle::fw::process::add_module: no module for '" + decl.label + "'");
  detail::node n;
  n.decl = std::move(decl);
  n.impl = std::move(impl);
  graph_->nodes.push_back(std::move(n));
}

void process::add_path(std::string name, std::vector<std::string> filters) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_path: already finalized");
  detail::path p;
  p.name = std::move(name);
  p.hash = detail::hash_label("path:" + p.name);
  graph_->paths.push_back(std::move(p));
  pending_labels_.push_back(std::move(filters));
}

void process::add_end_path(std::string name, std::vector<std::string> outputs) {
  if (graph_->finalized) throw std::logic_error("heddle::fw::process::add_end_path: already finalized");
  detail::path p;
  p.name = std::move(name);
  p.hash = detail::hash_label("endpath:" + p.name);
  graph_->end_paths.push_back(std::move(p));
  pending_end_labels_.push_back(std::move(outputs));
}

}  // namespace heddle::fw
