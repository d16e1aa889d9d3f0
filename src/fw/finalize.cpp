// process::finalize: a process checked as a whole and laid out for the processors, in passes. Each
// pass checks one thing and builds what the next ones read; the first problem ends it with a
// config_error "SOURCE: WHERE 'label': what" (tests/fw/process_test.cpp and heddle_fw_cli.sh check
// the messages). A pass that fails leaves the process unfinalized: what it built is rebuilt by the
// next call.
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph.hpp"
#include "heddle/fw/process.hpp"

namespace heddle::fw {

namespace {

// "a filter", "an output module".
std::string a(const char* noun) {
  return std::string(std::string_view("aeiou").find(noun[0]) == std::string_view::npos ? "a " : "an ") + noun;
}

std::string where_of(const detail::node& n) { return n.decl.where.empty() ? "module" : n.decl.where; }

class finalizer {
 public:
  finalizer(detail::graph& g, const std::string& source) : g_(g), source_(source) {}

  // Labels: none empty, none used twice ("label already used by"). Builds the label index and
  // each module's hash.
  void index_labels() {
    index_.clear();
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      detail::node& n = g_.nodes[i];
      if (n.decl.label.empty()) fail(where_of(n) + ": empty label");
      auto [it, fresh] = index_.emplace(n.decl.label, i);
      if (!fresh) fail(named(n) + ": label already used by " + where_of(g_.nodes[it->second]));
      n.hash = detail::hash_label(n.decl.label);
    }
  }

  // Inputs (toGet): known labels ("unknown label"), of producers ("is a filter, not a producer"),
  // with the product instance asked for ("has no product instance"). Builds each module's inputs
  // (per declared input) and distinct producers.
  void resolve_inputs() {
    for (detail::node& n : g_.nodes) {
      n.inputs.clear();
      for (std::size_t k = 0; k < n.decl.inputs.size(); ++k) {
        const product_request& r = n.decl.inputs[k];
        const std::string at = named(n) + ": toGet[" + std::to_string(k) + "]: ";
        const std::uint32_t q = find(r.label, at);
        const detail::node& p = g_.nodes[q];
        if (p.decl.role != module_role::producer)
          fail(at + "'" + r.label + "' is " + a(to_string(p.decl.role)) + ", not a producer: it has no product to get");
        if (!r.product.empty() && r.product != p.decl.product_label)
          fail(at + "'" + r.label + "' has no product instance '" + r.product + "' (it makes '" + p.decl.product_label + "')");
        n.inputs.push_back(q);
      }
      n.producers = n.inputs;
      std::sort(n.producers.begin(), n.producers.end());
      n.producers.erase(std::unique(n.producers.begin(), n.producers.end()), n.producers.end());
    }
  }

  // No module gets its own product through its producers: a depth-first search that reports the
  // first cycle it meets ("dependency cycle: 'a' -> 'b' -> 'a'"). Builds nothing.
  void check_acyclic() const {
    enum : std::uint8_t { unseen, open, closed };
    std::vector<std::uint8_t> mark(g_.size(), unseen);
    std::vector<std::uint32_t> stack;
    std::vector<std::pair<std::uint32_t, std::size_t>> frames;
    for (std::uint32_t root = 0; root < g_.size(); ++root) {
      if (mark[root] != unseen) continue;
      frames.push_back({root, 0});
      mark[root] = open;
      stack.push_back(root);
      while (!frames.empty()) {
        auto& [m, next] = frames.back();
        if (next == g_.nodes[m].producers.size()) {
          mark[m] = closed;
          stack.pop_back();
          frames.pop_back();
          continue;
        }
        const std::uint32_t p = g_.nodes[m].producers[next++];
        if (mark[p] == open) {
          std::string cycle;
          for (auto it = std::find(stack.begin(), stack.end(), p); it != stack.end(); ++it)
            cycle += "'" + g_.nodes[*it].decl.label + "' -> ";
          fail("dependency cycle: " + cycle + "'" + g_.nodes[p].decl.label + "' (each gets the next one's product)");
        }
        if (mark[p] == unseen) {
          mark[p] = open;
          stack.push_back(p);
          frames.push_back({p, 0});
        }
      }
    }
  }

  // Checks nothing. Builds the edges from producers to the modules that get their products: each
  // module's in-edges numbered together (first_in_edge), and every module's out-edges.
  void lay_input_edges() {
    g_.out.assign(g_.size(), {});
    edges_ = 0;
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      detail::node& n = g_.nodes[i];
      n.first_in_edge = edges_;
      for (std::uint32_t p : n.producers) g_.out[p].push_back({edges_++, i});
    }
  }

  // Members of paths (`what` "path", `role` filter) or end paths ("end path", output modules):
  // known labels ("unknown label") of that role ("is a producer, not a filter"). Builds each
  // path's members.
  void resolve_paths(std::vector<detail::path>& paths, const std::vector<std::vector<std::string>>& labels,
                     module_role role, const char* what) {
    for (std::size_t p = 0; p < paths.size(); ++p) {
      detail::path& path = paths[p];
      path.members.clear();
      for (std::size_t k = 0; k < labels[p].size(); ++k) {
        const std::string& l = labels[p][k];
        const std::string at = std::string(what) + " '" + path.name + "'[" + std::to_string(k) + "]: ";
        const std::uint32_t m = find(l, at);
        const module_role r = g_.nodes[m].decl.role;
        if (r != role) fail(at + "'" + l + "' is " + a(to_string(r)) + ", not " + a(to_string(role)));
        path.members.push_back(m);
      }
    }
  }

  // Checks nothing. Builds one edge per path step, from its filter, after the input edges: the
  // paths' steps (first_step, step_edge, step_path) and the edge count.
  void lay_step_edges() {
    g_.step_edge.clear();
    g_.step_path.clear();
    for (std::uint32_t p = 0; p < g_.paths.size(); ++p) {
      detail::path& path = g_.paths[p];
      path.first_step = static_cast<std::uint32_t>(g_.step_edge.size());
      for (std::uint32_t f : path.members) {
        const auto step = static_cast<std::uint32_t>(g_.step_edge.size());
        g_.step_edge.push_back(edges_);
        g_.step_path.push_back(p);
        g_.out[f].push_back({edges_++, g_.size() + step});
      }
    }
    g_.num_edges = edges_;
  }

  // Output modules, module by module: selectEvents only on output modules ("selectEvents is for
  // output modules"), every output module on an end path ("on no end path"), every selected path
  // known ("selectEvents: unknown path"). Builds the distinct output modules of the end paths and
  // each one's selected path indices.
  void resolve_outputs() {
    g_.outputs.clear();
    for (const detail::path& p : g_.end_paths)
      for (std::uint32_t o : p.members)
        if (std::find(g_.outputs.begin(), g_.outputs.end(), o) == g_.outputs.end()) g_.outputs.push_back(o);
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      detail::node& n = g_.nodes[i];
      if (n.decl.role != module_role::output) {
        if (!n.decl.select_paths.empty()) fail(named(n) + ": selectEvents is for output modules");
        continue;
      }
      if (std::find(g_.outputs.begin(), g_.outputs.end(), i) == g_.outputs.end())
        fail(named(n) + ": output module on no end path (it would never run)");
      n.select_paths.clear();
      for (const std::string& name : n.decl.select_paths) {
        auto it = std::find_if(g_.paths.begin(), g_.paths.end(), [&](const detail::path& p) { return p.name == name; });
        if (it == g_.paths.end()) fail(named(n) + ": selectEvents: unknown path '" + name + "'");
        n.select_paths.push_back(static_cast<std::uint32_t>(it - g_.paths.begin()));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }
  std::string named(const detail::node& n) const { return where_of(n) + " '" + n.decl.label + "'"; }

  // The module labelled `label`; "unknown label" after `at` (where it was named) otherwise.
  std::uint32_t find(const std::string& label, const std::string& at) const {
    auto it = index_.find(label);
    if (it == index_.end()) fail(at + "unknown label '" + label + "'");
    return it->second;
  }

  detail::graph& g_;
  const std::string& source_;
  std::unordered_map<std::string, std::uint32_t> index_;  // label -> module
  std::uint32_t edges_ = 0;                               // edges laid so far
};

}  // namespace

void process::finalize() {
  detail::graph& g = *graph_;
  if (g.finalized) return;
  finalizer f(g, source_);
  f.index_labels();
  f.resolve_inputs();
  f.check_acyclic();
  f.lay_input_edges();
  f.resolve_paths(g.paths, pending_labels_, module_role::filter, "path");
  f.resolve_paths(g.end_paths, pending_end_labels_, module_role::output, "end path");
  f.lay_step_edges();
  f.resolve_outputs();
  pending_labels_.clear();
  pending_end_labels_.clear();
  g.finalized = true;
}

}  // namespace heddle::fw
