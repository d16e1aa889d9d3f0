// Building and checking a process: labels resolved, roles checked, cycles found, edges laid out.
#include "heddle/fw/process.hpp"

#include <algorithm>
#include <unordered_map>

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

namespace {

// "a filter", "an output module".
std::string a(const char* noun) {
  return std::string(std::string_view("aeiou").find(noun[0]) == std::string_view::npos ? "a " : "an ") + noun;
}

std::string where_of(const detail::node& n) { return n.decl.where.empty() ? "module" : n.decl.where; }

}  // namespace

process::process(std::string source) : source_(std::move(source)), graph_(std::make_unique<detail::graph>()) {}
process::~process() = default;
process::process(process&&) noexcept = default;
process& process::operator=(process&&) noexcept = default;

std::size_t process::num_modules() const noexcept { return graph_->nodes.size(); }

const module_decl& process::declaration(std::size_t i) const {
  if (i >= graph_->nodes.size())
    throw std::out_of_range("heddle::fw::process::declaration: module " + std::to_string(i) + " of " +
                            std::to_string(graph_->nodes.size()));
  return graph_->nodes[i].decl;
}

const detail::graph& process::graph() const {
  if (!graph_->finalized) throw std::logic_error("heddle::fw::process::graph: finalize() first");
  return *graph_;
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

void process::finalize() {
  detail::graph& g = *graph_;
  if (g.finalized) return;
  auto fail = [&](const std::string& what) -> void { throw config_error(source_ + ": " + what); };
  auto named = [&](const detail::node& n) { return where_of(n) + " '" + n.decl.label + "'"; };

  std::unordered_map<std::string, std::uint32_t> index;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    detail::node& n = g.nodes[i];
    if (n.decl.label.empty()) fail(where_of(n) + ": empty label");
    auto [it, fresh] = index.emplace(n.decl.label, i);
    if (!fresh) fail(named(n) + ": label already used by " + where_of(g.nodes[it->second]));
    n.hash = detail::hash_label(n.decl.label);
  }
  auto path_index = [&](const std::string& name) -> std::int64_t {
    for (std::size_t p = 0; p < g.paths.size(); ++p)
      if (g.paths[p].name == name) return static_cast<std::int64_t>(p);
    return -1;
  };

  // Inputs: known labels, producers only, existing product instances.
  for (detail::node& n : g.nodes) {
    n.inputs.clear();
    for (std::size_t k = 0; k < n.decl.inputs.size(); ++k) {
      const product_request& r = n.decl.inputs[k];
      const std::string at = named(n) + ": toGet[" + std::to_string(k) + "]: ";
      auto it = index.find(r.label);
      if (it == index.end()) fail(at + "unknown label '" + r.label + "'");
      const detail::node& p = g.nodes[it->second];
      if (p.decl.role != module_role::producer)
        fail(at + "'" + r.label + "' is " + a(to_string(p.decl.role)) + ", not a producer: it has no product to get");
      if (!r.product.empty() && r.product != p.decl.product_label)
        fail(at + "'" + r.label + "' has no product instance '" + r.product + "' (it makes '" + p.decl.product_label + "')");
      n.inputs.push_back(it->second);
    }
    n.producers = n.inputs;
    std::sort(n.producers.begin(), n.producers.end());
    n.producers.erase(std::unique(n.producers.begin(), n.producers.end()), n.producers.end());
  }

  // No cycles: a depth-first search that prints the first cycle it meets.
  {
    enum : std::uint8_t { unseen, open, closed };
    std::vector<std::uint8_t> mark(g.size(), unseen);
    std::vector<std::uint32_t> stack;
    std::vector<std::pair<std::uint32_t, std::size_t>> frames;
    for (std::uint32_t root = 0; root < g.size(); ++root) {
      if (mark[root] != unseen) continue;
      frames.push_back({root, 0});
      mark[root] = open;
      stack.push_back(root);
      while (!frames.empty()) {
        auto& [m, next] = frames.back();
        if (next == g.nodes[m].producers.size()) {
          mark[m] = closed;
          stack.pop_back();
          frames.pop_back();
          continue;
        }
        const std::uint32_t p = g.nodes[m].producers[next++];
        if (mark[p] == open) {
          std::string cycle;
          auto from = std::find(stack.begin(), stack.end(), p);
          for (auto it = from; it != stack.end(); ++it) cycle += "'" + g.nodes[*it].decl.label + "' -> ";
          fail("dependency cycle: " + cycle + "'" + g.nodes[p].decl.label + "' (each gets the next one's product)");
        }
        if (mark[p] == unseen) {
          mark[p] = open;
          stack.push_back(p);
          frames.push_back({p, 0});
        }
      }
    }
  }

  // Edges: each module's in-edges together, then one per path step.
  g.out.assign(g.size(), {});
  std::uint32_t edge = 0;
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    detail::node& n = g.nodes[i];
    n.first_in_edge = edge;
    for (std::uint32_t p : n.producers) g.out[p].push_back({edge++, i});
  }
  auto resolve = [&](std::vector<detail::path>& paths, std::vector<std::vector<std::string>>& labels, module_role role,
                     const char* what) {
    for (std::size_t p = 0; p < paths.size(); ++p) {
      detail::path& path = paths[p];
      path.members.clear();
      for (std::size_t k = 0; k < labels[p].size(); ++k) {
        const std::string& l = labels[p][k];
        const std::string at = std::string(what) + " '" + path.name + "'[" + std::to_string(k) + "]: ";
        auto it = index.find(l);
        if (it == index.end()) fail(at + "unknown label '" + l + "'");
        const module_role r = g.nodes[it->second].decl.role;
        if (r != role) fail(at + "'" + l + "' is " + a(to_string(r)) + ", not " + a(to_string(role)));
        path.members.push_back(it->second);
      }
    }
  };
  resolve(g.paths, pending_labels_, module_role::filter, "path");
  resolve(g.end_paths, pending_end_labels_, module_role::output, "end path");
  g.step_edge.clear();
  g.step_path.clear();
  for (std::uint32_t p = 0; p < g.paths.size(); ++p) {
    detail::path& path = g.paths[p];
    path.first_step = static_cast<std::uint32_t>(g.step_edge.size());
    for (std::uint32_t f : path.members) {
      const auto step = static_cast<std::uint32_t>(g.step_edge.size());
      g.step_edge.push_back(edge);
      g.step_path.push_back(p);
      g.out[f].push_back({edge++, g.size() + step});
    }
  }
  g.num_edges = edge;

  g.outputs.clear();
  for (const detail::path& p : g.end_paths)
    for (std::uint32_t o : p.members)
      if (std::find(g.outputs.begin(), g.outputs.end(), o) == g.outputs.end()) g.outputs.push_back(o);
  for (std::uint32_t i = 0; i < g.size(); ++i) {
    detail::node& n = g.nodes[i];
    if (n.decl.role != module_role::output) {
      if (!n.decl.select_paths.empty()) fail(named(n) + ": selectEvents is for output modules");
      continue;
    }
    if (std::find(g.outputs.begin(), g.outputs.end(), i) == g.outputs.end())
      fail(named(n) + ": output module on no end path (it would never run)");
    n.select_paths.clear();
    for (const std::string& name : n.decl.select_paths) {
      const std::int64_t p = path_index(name);
      if (p < 0) fail(named(n) + ": selectEvents: unknown path '" + name + "'");
      n.select_paths.push_back(static_cast<std::uint32_t>(p));
    }
  }
  pending_labels_.clear();
  pending_end_labels_.clear();
  g.finalized = true;
}

}  // namespace heddle::fw
