// SPDX-License-Identifier: Apache-2.0
#include "peers.hpp"

#include <unistd.h>

#include <cstdio>

namespace heddle::am_detail {

peer_table::peer_table(node_id self, node_id nodes) : peers_(nodes), self_(self) {
  peers_[self].hello = true;
  peers_[self].pid = ::getpid();
}

std::string peer_table::describe(node_id n) const {
  std::lock_guard lock(m_);
  std::string s = "node " + std::to_string(n);
  if (n < peers_.size() && peers_[n].pid) s += " (pid " + std::to_string(peers_[n].pid) + ")";
  return s;
}

void peer_table::check_reachable(node_id n) const {
  if (n >= peers_.size())
    throw session_error("heddle::offload: node " + std::to_string(n) + " does not exist: the session has " +
                        std::to_string(peers_.size()) + " nodes");
  if (peers_[n].lost.load(std::memory_order_acquire)) {
    std::string why;
    {
      std::lock_guard lock(m_);
      why = peers_[n].why;
    }
    throw peer_lost(n, "heddle::offload: " + describe(n) + " is lost: " + why);
  }
}

std::string peer_table::loss_text(node_id n) const {
  std::string why;
  {
    std::lock_guard lock(m_);
    why = peers_[n].why;
  }
  return "heddle::offload: " + describe(n) + " was lost: " + why;
}

bool peer_table::mark_lost(node_id n, const std::string& why) {
  std::lock_guard lock(m_);
  if (n >= peers_.size() || peers_[n].lost.load()) return false;
  peers_[n].why = why;
  peers_[n].lost.store(true, std::memory_order_release);
  sweeps_due_.store(2, std::memory_order_release);
  cv_.notify_all();
  return true;
}

bool peer_table::take_sweep() noexcept {
  unsigned due = sweeps_due_.load(std::memory_order_acquire);
  while (due > 0 && !sweeps_due_.compare_exchange_weak(due, due - 1, std::memory_order_acq_rel)) {
  }
  return due > 0;
}

void peer_table::all_present() {
  std::lock_guard lock(m_);
  for (peer_state& p : peers_) p.hello = true;
}

void peer_table::record_hello(node_id from, const hello& h, std::uint64_t registry_hash, std::uint64_t registry_count) {
  const node_id nodes = size();
  std::lock_guard lock(m_);
  peer_state& p = peers_[from];
  p.pid = h.pid;
  if (h.node != from || h.nodes != nodes) {
    p.refused = std::make_exception_ptr(session_error("heddle::offload: node " + std::to_string(from) + " (pid " +
                                                      std::to_string(h.pid) + ") says it is node " +
                                                      std::to_string(h.node) + " of " + std::to_string(h.nodes) +
                                                      "; this is node " + std::to_string(self_) + " of " +
                                                      std::to_string(nodes)));
  } else if (h.hash != registry_hash || h.count != registry_count) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "heddle::offload: node %u (pid %lld) was built with a different set of handlers "
                  "(%llu handlers, registry hash %016llx; this process: %llu, %016llx): they would disagree on "
                  "which function a message calls; run the same program on every node",
                  from, static_cast<long long>(h.pid), static_cast<unsigned long long>(h.count),
                  static_cast<unsigned long long>(h.hash), static_cast<unsigned long long>(registry_count),
                  static_cast<unsigned long long>(registry_hash));
    p.refused = std::make_exception_ptr(registry_mismatch(from, buf));
  }
  p.hello = true;
  cv_.notify_all();
}

void peer_table::record_goodbye(node_id from) {
  std::lock_guard lock(m_);
  peers_[from].goodbye = true;
  cv_.notify_all();
}

std::exception_ptr peer_table::await_hellos(std::chrono::steady_clock::time_point deadline,
                                            std::chrono::milliseconds connect_timeout) {
  const bool all = await(
      [&] {
        for (const peer_state& p : peers_)
          if (!p.hello && !p.lost.load() && !p.refused) return false;
        return true;
      },
      deadline);
  std::exception_ptr failure;
  std::lock_guard lock(m_);
  for (node_id n = 0; n < size() && !failure; ++n) {
    if (peers_[n].refused) failure = peers_[n].refused;
    else if (peers_[n].lost.load())
      failure = std::make_exception_ptr(peer_lost(n, "heddle::offload: node " + std::to_string(n) +
                                                         " was lost while the session started: " + peers_[n].why));
    else if (!all && !peers_[n].hello)
      failure = std::make_exception_ptr(peer_lost(n, "heddle::offload: node " + std::to_string(n) +
                                                         " did not say hello within " +
                                                         std::to_string(connect_timeout.count()) + " ms"));
  }
  return failure;
}

std::string peer_table::await_goodbyes(std::chrono::steady_clock::time_point deadline) {
  const auto silent = [&](node_id n) { return n != self_ && !peers_[n].goodbye && !peers_[n].lost.load(); };
  std::string missing;
  if (await(
          [&] {
            for (node_id n = 0; n < size(); ++n)
              if (silent(n)) return false;
            return true;
          },
          deadline))
    return missing;
  std::lock_guard lock(m_);
  for (node_id n = 0; n < size(); ++n)
    if (silent(n)) {
      missing += ' ';  // appended, not joined with operator+ (GCC 12's false -Wrestrict there)
      missing += std::to_string(n);
    }
  return missing;
}

bool peer_table::await_node0_goodbye() {
  std::unique_lock lock(m_);
  cv_.wait(lock, [&] { return peers_[0].goodbye || peers_[0].lost.load(); });
  if (!peers_[0].goodbye)  // the serving node's only word on why it stops
    std::fprintf(stderr, "heddle: node %u: node 0 was lost (%s); serving ends\n", self_, peers_[0].why.c_str());
  return peers_[0].goodbye;
}

void peer_table::record_clock_reply(std::int64_t probe_ns, std::int64_t remote_ns) {
  std::lock_guard lock(m_);
  reply_probe_ns_ = probe_ns;
  reply_remote_ns_ = remote_ns;
  cv_.notify_all();
}

bool peer_table::await_clock_reply(std::int64_t probe_ns, std::chrono::steady_clock::time_point deadline,
                                   std::int64_t& remote_ns) {
  return await(
      [&] {
        if (reply_probe_ns_ != probe_ns) return false;
        remote_ns = reply_remote_ns_;
        return true;
      },
      deadline);
}

}  // namespace heddle::am_detail
