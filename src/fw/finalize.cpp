// SPDX-License-Identifier: Apache-2.0
// process::finalize: a process checked as a whole and laid out for the processors, in passes. Each
// pass checks one thing and builds what the next ones read; the first problem ends it with a
// config_error "SOURCE: WHERE 'label': what" (tests/fw/process_test.cpp and heddle_fw_cli.sh check
// the messages). A pass that fails leaves the process unfinalized: what it built is rebuilt by the
// next call.
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph.hpp"
#include "heddle/fw/process.hpp"
#include "module_access.hpp"
#include "type_name.hpp"

namespace heddle::fw {

namespace {

// "a filter", "an output module".
std::string a(const char* noun) {
  return std::string(std::string_view("aeiou").find(noun[0]) == std::string_view::npos ? "a " : "an ") + noun;
}

std::string where_of(const fw_detail::node& n) { return n.spec.where.empty() ? "module" : n.spec.where; }

// How a consumes names its branch, and a maker the transition of its product, in messages.
const char* branch_suffix(branch_type where) {
  return where == in_lumi ? " in_lumi" : where == in_run ? " in_run" : "";
}
const char* made_suffix(transition when) {
  return when == transition::end_luminosity_block ? " at end_luminosity_block"
         : when == transition::end_run            ? " at end_run"
                                                  : "";
}

class finalizer {
 public:
  finalizer(fw_detail::graph& g, const std::string& source) : g_(g), source_(source) {}

  // Labels: none empty, none used twice ("label already used by"). Builds the label index and
  // each module's hash.
  void index_labels() {
    index_.clear();
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      fw_detail::node& n = g_.nodes[i];
      if (n.spec.label.empty()) fail(where_of(n) + ": empty label");
      auto [it, fresh] = index_.emplace(n.spec.label, i);
      if (!fresh) fail(named(n) + ": label already used by " + where_of(g_.nodes[it->second]));
      n.hash = fw_detail::hash_label(n.spec.label);
    }
  }

  // Products: every module's produces become the process's products, event, luminosity-block and
  // run products apart; every consumed (tag, type) must be made by a module of that label
  // ("unknown label"), under that instance, of that type and in the event, at the end of the lumi
  // or at the end of the run as the consumes says ("makes no T 'tag'", listing what it makes, lumi
  // products marked "at end_luminosity_block", run products "at end_run"). No conditions yet:
  // es_consumes is refused. Builds the three product tables, each module's consumed, products and
  // event_products and its distinct producers (of event products: lumi and run products make no
  // edges, end_lumi_order and end_run_order order them).
  void resolve_products() {
    g_.products.clear();
    g_.boxed_products.clear();
    g_.lumi_products.clear();
    g_.run_products.clear();
    for (std::uint32_t m = 0; m < g_.size(); ++m) {
      fw_detail::node& n = g_.nodes[m];
      n.products.clear();
      n.event_products.clear();
      for (const fw_detail::produced& p : n.declared().produces) {
        const bool event_product = p.when == transition::event;
        auto& table = event_product                                ? g_.products
                      : p.when == transition::end_luminosity_block ? g_.lumi_products
                                                                   : g_.run_products;
        n.products.push_back(static_cast<std::uint32_t>(table.size()));
        if (event_product) n.event_products.push_back(n.products.back());
        if (event_product && !p.ops->in_place) g_.boxed_products.push_back(n.products.back());
        table.push_back({m, p.instance, p.ops});
      }
    }
    for (fw_detail::node& n : g_.nodes) {
      n.consumed.clear();
      const auto& consumes = n.declared().consumes;
      for (std::size_t k = 0; k < consumes.size(); ++k) {
        const fw_detail::consumed& c = consumes[k];
        const transition when = fw_detail::made_at(c.where);
        const std::string what = fw_detail::type_name(*c.type) + " '" + c.tag.encode() + "'" + branch_suffix(c.where);
        const std::string at = named(n) + ": consumes " + what + ": ";
        const fw_detail::node& maker = g_.nodes[find(c.tag.label, at)];
        std::uint32_t found = fw_detail::no_index;
        std::string made;
        for (std::size_t d = 0; d < maker.products.size(); ++d) {
          const transition made_at = maker.declared().produces[d].when;
          const fw_detail::product& q = g_.table_of(made_at)[maker.products[d]];
          if (made_at == when && q.instance == c.tag.instance && *q.ops->type == *c.type) found = maker.products[d];
          made += (made.empty() ? "" : ", ") + fw_detail::type_name(*q.ops->type) + " '" + maker.spec.label +
                  (q.instance.empty() ? "" : ":" + q.instance) + "'" + made_suffix(made_at);
        }
        if (found == fw_detail::no_index)
          fail(at + named(maker) + " makes no " + what + " (" +
               (made.empty() ? "it makes no products" : "it makes " + made) + ")");
        n.consumed.push_back(found);
      }
      n.reads.clear();
      // A lumi or run declaration's entry carries typeid(void), which no token's type is:
      // event::get and emplace refuse it (and then say where it belongs).
      for (std::size_t k = 0; k < consumes.size(); ++k)
        n.reads.push_back({n.consumed[k], consumes[k].where == in_event ? consumes[k].type : &typeid(void)});
      n.writes.clear();
      for (std::size_t k = 0; k < n.products.size(); ++k) {
        const fw_detail::produced& p = n.declared().produces[k];
        n.writes.push_back({n.products[k], p.when == transition::event ? p.ops->type : &typeid(void)});
      }
      n.producers.clear();
      for (std::size_t k = 0; k < consumes.size(); ++k)
        if (consumes[k].where == in_event) n.producers.push_back(g_.products[n.consumed[k]].module);
      std::sort(n.producers.begin(), n.producers.end());
      n.producers.erase(std::unique(n.producers.begin(), n.producers.end()), n.producers.end());
    }
  }

  // Conditions: every condition producer declares something ("makes nothing"), no two make the
  // same (type, record, label) ("also made by"); every module's es_consumes is made by one
  // ("no condition producer makes"). Builds the es items, each module's es_consumed and distinct
  // condition producers, and each producer's record and intervals (the source's for its record).
  void resolve_conditions() {
    g_.es_items.clear();
    for (std::uint32_t q = 0; q < g_.es_nodes.size(); ++q) {
      fw_detail::es_node& p = g_.es_nodes[q];
      const auto& made = fw_detail::es_access::declared(*p.impl);
      const std::string at = (p.where.empty() ? std::string("condition producer") : p.where) + " '" + p.label + "'";
      if (made.empty()) fail(at + ": makes nothing (declare with es_produces in its constructor)");
      p.record = made.front().record;
      p.record_name = fw_detail::type_name(*p.record);
      p.intervals = g_.source.intervals(p.record_name);
      for (std::uint32_t i = 0; i < made.size(); ++i) {
        for (const fw_detail::es_item& other : g_.es_items) {
          const fw_detail::es_produced& o =
              fw_detail::es_access::declared(*g_.es_nodes[other.producer].impl)[other.index];
          if (*o.ops->type == *made[i].ops->type && *o.record == *made[i].record && o.label == made[i].label)
            fail(at + ": makes " + fw_detail::type_name(*o.ops->type) + " of record " + p.record_name +
                 ", also made by '" + g_.es_nodes[other.producer].label + "'");
        }
        g_.es_items.push_back({q, i});
      }
    }
    for (fw_detail::node& n : g_.nodes) {
      n.es_consumed.clear();
      n.es_producers.clear();
      for (const fw_detail::es_consumed& c : n.declared().es_consumes) {
        std::uint32_t found = fw_detail::no_index;
        for (std::uint32_t k = 0; k < g_.es_items.size(); ++k) {
          const fw_detail::es_item& it = g_.es_items[k];
          const fw_detail::es_produced& o = fw_detail::es_access::declared(*g_.es_nodes[it.producer].impl)[it.index];
          if (*o.ops->type == *c.type && *o.record == *c.record && o.label == c.label) found = k;
        }
        if (found == fw_detail::no_index)
          fail(named(n) + ": consumes conditions " + fw_detail::type_name(*c.type) + " of record " +
               fw_detail::type_name(*c.record) + (c.label.empty() ? "" : " labelled '" + c.label + "'") +
               ", but no condition producer makes them");
        n.es_consumed.push_back(found);
        n.es_producers.push_back(g_.es_items[found].producer);
      }
      std::sort(n.es_producers.begin(), n.es_producers.end());
      n.es_producers.erase(std::unique(n.es_producers.begin(), n.es_producers.end()), n.es_producers.end());
      if (n.producers.size() + n.es_producers.size() > fw_detail::max_waits)
        fail(named(n) + ": reads the products of " + std::to_string(n.producers.size()) + " modules and the data of " +
             std::to_string(n.es_producers.size()) + " condition producers: at most " +
             std::to_string(fw_detail::max_waits) + " in all");
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
            cycle += "'" + g_.nodes[*it].spec.label + "' -> ";
          fail("dependency cycle: " + cycle + "'" + g_.nodes[p].spec.label + "' (each gets the next one's product)");
        }
        if (mark[p] == unseen) {
          mark[p] = open;
          stack.push_back(p);
          frames.push_back({p, 0});
        }
      }
    }
  }

  // The order of end_luminosity_block (`where` in_lumi) or end_run (in_run): a module that reads
  // a product of that branch after the module that makes it, otherwise in the order modules were
  // added (the lowest ready index first). A cycle fails ("luminosity-block products form a cycle",
  // "run products form a cycle", naming the modules caught in it). Builds `order`.
  void order_end_transitions(branch_type where, std::vector<std::uint32_t>& order) {
    const std::uint32_t n = g_.size();
    const std::vector<fw_detail::product>& table = g_.table_of(fw_detail::made_at(where));
    std::vector<std::vector<std::uint32_t>> readers(n);
    std::vector<std::uint32_t> waiting(n, 0);
    for (std::uint32_t m = 0; m < n; ++m) {
      std::vector<std::uint32_t> makers;
      const auto& consumes = g_.nodes[m].declared().consumes;
      for (std::size_t k = 0; k < consumes.size(); ++k)
        if (consumes[k].where == where) makers.push_back(table[g_.nodes[m].consumed[k]].module);
      std::sort(makers.begin(), makers.end());
      makers.erase(std::unique(makers.begin(), makers.end()), makers.end());
      for (std::uint32_t p : makers) readers[p].push_back(m);
      waiting[m] = static_cast<std::uint32_t>(makers.size());
    }
    std::vector<std::uint32_t> ready;  // a min-heap of module indices
    for (std::uint32_t m = 0; m < n; ++m)
      if (waiting[m] == 0) ready.push_back(m);
    std::make_heap(ready.begin(), ready.end(), std::greater<>());
    order.clear();
    while (!ready.empty()) {
      std::pop_heap(ready.begin(), ready.end(), std::greater<>());
      const std::uint32_t m = ready.back();
      ready.pop_back();
      order.push_back(m);
      for (std::uint32_t r : readers[m])
        if (--waiting[r] == 0) {
          ready.push_back(r);
          std::push_heap(ready.begin(), ready.end(), std::greater<>());
        }
    }
    if (order.size() == n) return;
    std::string caught;
    for (std::uint32_t m = 0; m < n; ++m)
      if (waiting[m] != 0) caught += (caught.empty() ? "'" : ", '") + g_.nodes[m].spec.label + "'";
    const bool lumi = where == in_lumi;
    fail(std::string(lumi ? "luminosity-block products" : "run products") + " form a cycle: the " +
         (lumi ? "end_luminosity_block" : "end_run") + " of " + caught + " cannot be ordered (their consumes " +
         (lumi ? "in_lumi" : "in_run") + " wait on one another's products)");
  }

  // Checks nothing. Builds the edges from producers to the modules that get their products: each
  // module's in-edges numbered together (first_in_edge), and every module's out-edges.
  void lay_input_edges() {
    g_.out.assign(g_.size(), {});
    edges_ = 0;
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      fw_detail::node& n = g_.nodes[i];
      n.first_in_edge = edges_;
      for (std::uint32_t p : n.producers) g_.out[p].push_back({edges_++, i});
    }
  }

  // Members of paths (`end` false: producers, filters, analyzers; a member that is not a filter
  // always passes) or of end paths (output modules and analyzers): known labels ("unknown label")
  // of a role that belongs there ("is an output module: it belongs on an end path"). Builds each
  // path's members.
  void resolve_paths(std::vector<fw_detail::path>& paths, const std::vector<std::vector<std::string>>& labels,
                     bool end) {
    const char* what = end ? "end path" : "path";
    for (std::size_t p = 0; p < paths.size(); ++p) {
      fw_detail::path& path = paths[p];
      path.members.clear();
      for (std::size_t k = 0; k < labels[p].size(); ++k) {
        const std::string& l = labels[p][k];
        const std::string at = std::string(what) + " '" + path.name + "'[" + std::to_string(k) + "]: ";
        const std::uint32_t m = find(l, at);
        const module_role r = g_.nodes[m].role();
        if (!end && r == module_role::output) fail(at + "'" + l + "' is an output module: it belongs on an end path");
        if (end && r != module_role::output && r != module_role::analyzer)
          fail(at + "'" + l + "' is " + a(to_string(r)) + ": an end path holds output modules and analyzers");
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
      fw_detail::path& path = g_.paths[p];
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
    for (fw_detail::node& n : g_.nodes) n.on_end_path = false;
    for (const fw_detail::path& p : g_.end_paths)
      for (std::uint32_t o : p.members)
        if (!g_.nodes[o].on_end_path) {
          g_.nodes[o].on_end_path = true;
          g_.outputs.push_back(o);
        }
    for (const fw_detail::path& p : g_.paths)
      for (std::uint32_t m : p.members)
        if (g_.nodes[m].on_end_path)
          fail(named(g_.nodes[m]) + ": on path '" + p.name + "' and on an end path: a module runs on one or the other");
    for (std::uint32_t i = 0; i < g_.size(); ++i) {
      fw_detail::node& n = g_.nodes[i];
      if (n.role() != module_role::output && n.role() != module_role::analyzer) {
        if (!n.spec.select_paths.empty()) fail(named(n) + ": selectEvents is for output modules");
        continue;
      }
      const bool on_end_path = n.on_end_path;
      if (n.role() == module_role::output && !on_end_path)
        fail(named(n) + ": output module on no end path (it would never run)");
      if (!on_end_path && !n.spec.select_paths.empty()) fail(named(n) + ": selectEvents is for modules on end paths");
      n.select_paths.clear();
      for (const std::string& name : n.spec.select_paths) {
        auto it = std::find_if(g_.paths.begin(), g_.paths.end(),
                               [&](const fw_detail::path& p) { return p.name == name; });
        if (it == g_.paths.end()) fail(named(n) + ": selectEvents: unknown path '" + name + "'");
        n.select_paths.push_back(static_cast<std::uint32_t>(it - g_.paths.begin()));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw config_error(source_ + ": " + what); }
  std::string named(const fw_detail::node& n) const { return where_of(n) + " '" + n.spec.label + "'"; }

  // The module labelled `label`; "unknown label" after `at` (where it was named) otherwise.
  std::uint32_t find(const std::string& label, const std::string& at) const {
    auto it = index_.find(label);
    if (it == index_.end()) fail(at + "unknown label '" + label + "'");
    return it->second;
  }

  fw_detail::graph& g_;
  const std::string& source_;
  std::unordered_map<std::string, std::uint32_t> index_;  // label -> module
  std::uint32_t edges_ = 0;                               // edges laid so far
};

}  // namespace

void process::finalize() {
  fw_detail::graph& g = *graph_;
  if (g.finalized) return;
  finalizer f(g, source_);
  f.index_labels();
  f.resolve_products();
  f.resolve_conditions();
  f.check_acyclic();
  f.order_end_transitions(in_lumi, g.end_lumi_order);
  f.order_end_transitions(in_run, g.end_run_order);
  f.lay_input_edges();
  f.resolve_paths(g.paths, pending_labels_, false);
  f.resolve_paths(g.end_paths, pending_end_labels_, true);
  f.lay_step_edges();
  f.resolve_outputs();
  pending_labels_.clear();
  pending_end_labels_.clear();
  g.finalized = true;
}

}  // namespace heddle::fw
