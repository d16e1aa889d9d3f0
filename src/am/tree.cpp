// SPDX-License-Identifier: Apache-2.0
// Calls to every node along a tree (offload::broadcast, for_each_node): the frames and the ranks are
// heddle/am/detail/tree.hpp's. Each node of the tree, the origin included, keeps a tree_gather
// until its own result (not the origin's) and its subtrees' replies are in; a subtree whose first
// node is lost answers for all of its nodes with the loss. The gathers and the subtrees' calls are
// records of the runtime's block caches (core/detail/block_cache.hpp), and the entries of a small
// tree stay in their writers' own bytes: a broadcast to a few nodes calls malloc for its result
// vector only.
#include <algorithm>
#include <mutex>
#include <vector>

#include "engine.hpp"
#include "heddle/core/detail/exception_text.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "heddle/core/detail/worker.hpp"

namespace heddle::am_detail {

class engine::tree_gather {
 public:
  // At the origin: `root` completes with the results. Elsewhere: the entries go to `parent` as the
  // reply to its call `parent_call`.
  tree_gather(engine& e, node_id self, node_id origin, int expected, pending_call* root, node_id parent,
              std::uint64_t parent_call)
      : e_(e),
        self_(self),
        origin_(origin),
        root_(root),
        parent_(parent),
        parent_call_(parent_call),
        waiting_(expected) {
    e_.task_begun();  // the session's end waits for the reply this owes
  }

  // A subtree's entries, or this node's own (written in place); the last part to come in finishes
  // the gather, which is then gone.
  void add(std::span<const std::byte> entries) {
    add_part([&] { entries_.bytes(entries.data(), entries.size()); });
  }
  void add_entry(node_id node, tree_outcome outcome, std::span<const std::byte> bytes) {
    add_part([&] { append_tree_entry(entries_, node, outcome, bytes); });
  }

 private:
  template <class Append>
  void add_part(Append&& append) {
    {
      std::lock_guard lock(m_);
      append();
      if (--waiting_ > 0) return;
    }
    finish();
  }
  void finish() noexcept {
    if (root_) complete_root();
    else e_.reply(self_, parent_, parent_call_, message_kind::reply_value, entries_.data());
    e_.task_ended();
    heddle::core_detail::free_record(this);
  }

  // The results in node order for pending_tree, or the first failure in node order.
  void complete_root() noexcept {
    std::exception_ptr failure;
    writer ordered;  // the count, then the results
    try {
      // By node: on this stack in a session of up to 16 nodes.
      tree_entry on_stack[16];
      std::vector<tree_entry> on_heap;
      const std::size_t nodes = e_.nodes();
      std::span<tree_entry> by_node(on_stack, std::min(nodes, std::size(on_stack)));
      if (nodes > std::size(on_stack)) by_node = on_heap = std::vector<tree_entry>(nodes);
      decode_tree_entries(entries_.data(), origin_, by_node);
      const std::uint64_t count = nodes - 1;
      ordered.bytes(&count, sizeof count);
      for (node_id n = 0; n < by_node.size(); ++n) {
        if (n == origin_) continue;
        const tree_entry& entry = by_node[n];
        if (entry.outcome != tree_outcome::value) {  // a failure's bytes are its text
          const std::string text(reinterpret_cast<const char*>(entry.bytes.data()), entry.bytes.size());
          if (entry.outcome == tree_outcome::lost) throw peer_lost(n, text);
          throw remote_error(n, text);
        }
        ordered.bytes(entry.bytes.data(), entry.bytes.size());
      }
    } catch (...) {
      failure = std::current_exception();
    }
    // Completed outside the catch block: the waiter must not share an exception still being handled.
    if (failure) return root_->fail(std::move(failure));
    root_->complete(ordered.data());
  }

  engine& e_;
  const node_id self_, origin_;
  pending_call* const root_;
  const node_id parent_;
  const std::uint64_t parent_call_;
  heddle::core_detail::parking_mutex m_;  // held for a copy of entries (a large one: takers sleep)
  writer entries_;
  int waiting_;
};

namespace {

// A subtree's call: its reply holds the subtree's entries; its failure (the subtree's first node
// lost, or refusing the frame) becomes an entry for each of its nodes.
class tree_child final : public pending_call {
 public:
  tree_child(engine::tree_gather* g, node_id origin, node_id nodes, tree_range range) noexcept
      : g_(g), origin_(origin), nodes_(nodes), range_(range) {}

  void complete(std::span<const std::byte> reply) noexcept override {
    g_->add(reply);
    heddle::core_detail::free_record(this);
  }
  void fail(std::exception_ptr e) noexcept override {
    bool lost = false;
    try {
      std::rethrow_exception(e);
    } catch (const peer_lost&) {
      lost = true;
    } catch (...) {
    }
    const std::string text = heddle::core_detail::exception_text(e, /*with_type=*/false);
    const node_id head = node_of(range_.first);
    const std::string below = "heddle::offload: the broadcast did not reach node ";
    const std::string why = ": node " + std::to_string(head) + ", which was to pass it on, failed: " + text;
    writer entries;
    for (std::uint32_t r = range_.first; r < range_.first + range_.count; ++r) {
      const node_id n = node_of(r);
      const std::string t = n == head ? text : below + std::to_string(n) + why;
      append_tree_entry(entries, n, lost ? tree_outcome::lost : tree_outcome::threw, std::as_bytes(std::span(t)));
    }
    g_->add(entries.data());
    heddle::core_detail::free_record(this);
  }

 private:
  node_id node_of(std::uint32_t rank) const noexcept { return static_cast<node_id>((origin_ + rank) % nodes_); }

  engine::tree_gather* g_;
  node_id origin_, nodes_;
  tree_range range_;
};

int halves_to_send(const tree_range& r) {
  const auto [left, right] = r.halves();
  return (left.count > 0) + (right.count > 0);
}

}  // namespace

void engine::tree_fan_out(node_id self, node_id origin, const tree_range& range, const message_header& h,
                          std::span<const std::byte> args, tree_gather* g) {
  const auto [left, right] = range.halves();
  for (const tree_range& half : {left, right}) {
    if (half.count == 0) continue;
    const node_id child = static_cast<node_id>((origin + half.first) % nodes());
    std::byte head[tree_range::bytes];
    half.encode(head);
    const message_header out{.kind = message_kind::tree_call,
                             .strategy = h.strategy,
                             .handler = h.handler,
                             .call_id = new_call_id(),
                             .payload_bytes = tree_range::bytes + args.size()};
    // A child that cannot be reached fails its tree_child at once, which adds the subtree's entries.
    request_frame(self, child, out.pack(), head, args,
                  heddle::core_detail::make_record<tree_child>(g, origin, nodes(), half));
  }
}

void engine::tree_call(node_id from, std::uint32_t handler, heddle::strategy how, std::span<const std::byte> args,
                       pending_call* p) {
  const tree_range all{0, nodes()};  // the origin is rank 0; its subtrees, ranks 1 to N - 1
  const int expected = halves_to_send(all);
  if (expected == 0) {  // a session of one node: nobody to call
    const std::uint64_t none = 0;
    return p->complete(std::as_bytes(std::span(&none, 1)));
  }
  const message_header h{
      .kind = message_kind::tree_call, .strategy = static_cast<std::uint8_t>(how), .handler = handler};
  tree_fan_out(from, from, all, h, args,
               heddle::core_detail::make_record<tree_gather>(*this, from, from, expected, p, 0, 0));
}

// Passes the call on before running it: the nodes below start as soon as possible.
void engine::tree_call_from(node_id from, node_id to, const message_header& h, std::span<const std::byte> payload) {
  const tree_range range = tree_range::decode(payload, nodes());  // decode_error: a corrupt frame
  const node_id origin = static_cast<node_id>((to + nodes() - range.first % nodes()) % nodes());
  const std::span<const std::byte> args = payload.subspan(tree_range::bytes);
  auto* g = heddle::core_detail::make_record<tree_gather>(*this, to, origin, halves_to_send(range) + 1, nullptr, from,
                                                          h.call_id);
  tree_fan_out(to, origin, range, h, args, g);
  start_handler(origin, to, h, args, g);
}

void engine::tree_result(tree_gather* g, node_id node, bool threw, std::span<const std::byte> bytes) {
  g->add_entry(node, threw ? tree_outcome::threw : tree_outcome::value, bytes);
}

}  // namespace heddle::am_detail
