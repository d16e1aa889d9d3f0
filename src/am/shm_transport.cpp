// SPDX-License-Identifier: Apache-2.0
// The shm backend: processes on one host. Each node owns a segment, /dev/shm/heddle.<session>.n<k>,
// holding its control block (pid, doorbell) and one inbound ring per peer (shm_ring.hpp). A sender
// writes into the ring in the receiver's segment and, only when the receiver has gone to sleep,
// rings its doorbell (a futex in the segment). Buffers are segments of their own, which peers map
// and copy to and from directly: put and get are one memcpy, as fast as the memory. A frame too big
// for a quarter of a ring travels in a transfer segment that the receiver maps and unlinks.
// A peer's death is seen through a pidfd.
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "heddle/core/detail/spin_wait.hpp"
#include "shm_ring.hpp"
#include "shm_segment.hpp"
#include "small_copy.hpp"
#include "transports.hpp"

namespace heddle::am_detail {

namespace {

constexpr std::uint64_t control_magic = 0x4d48534c44444548ull;  // "HEDDLSHM"

struct node_control {
  std::uint64_t magic;
  std::uint32_t nodes, node;
  std::int64_t pid;
  std::uint64_t ring_bytes;
  std::atomic<std::uint32_t> ready;
  // Senders read `sleepers` after every frame: it sits on a line of its own that changes only when
  // the receiver goes to sleep or wakes.
  alignas(64) std::atomic<std::uint32_t> sleepers;
  std::atomic<std::uint32_t> doorbell;
};
constexpr std::size_t control_bytes = 128;
static_assert(sizeof(node_control) <= control_bytes);

// Futexes in shared memory are not process-private.
void shared_futex_wait(std::atomic<std::uint32_t>& w, std::uint32_t expected, std::int64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAIT, expected, &ts, nullptr, 0);
}
void shared_futex_wake(std::atomic<std::uint32_t>& w, int n) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w), FUTEX_WAKE, n, nullptr, nullptr, 0);
}

int pidfd_of(std::int64_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0)); }

bool process_exited(int pidfd) {
  if (pidfd < 0) return false;
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
}

std::size_t segment_bytes(std::uint32_t nodes, std::uint64_t ring_bytes) {
  return control_bytes + nodes * (sizeof(ring_control) + ring_bytes);
}

class shm_transport final : public transport {
 public:
  explicit shm_transport(const session_options& o) : o_(o), prefix_("/heddle." + o.session_name) {
    if (o.session_name.empty())
      throw session_error("heddle::offload: the shm backend needs a session name (heddle-run sets HEDDLE_SESSION)");
    for (char c : o.session_name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
        throw session_error("heddle::offload: session name '" + o.session_name +
                            "': letters, digits, '-', '_' and '.' only");
    if (o.ring_bytes < 4096 || (o.ring_bytes & (o.ring_bytes - 1)) != 0)
      throw session_error("heddle::offload: ring size " + std::to_string(o.ring_bytes) +
                          " bytes: a power of two, at least 4096");
    read_pos_ = std::make_unique<std::atomic<std::uint64_t>[]>(o.nodes);
    for (node_id n = 0; n < o.nodes; ++n) read_pos_[n].store(0);
  }
  ~shm_transport() override {
    for (auto& p : out_)
      if (p && p->pidfd >= 0) ::close(p->pidfd);
  }

  void start(frame_sink& sink) override {
    sink_ = &sink;
    const node_id self = o_.node;
    try {
      own_ = shm_segment::create(segment_name(self), segment_bytes(o_.nodes, o_.ring_bytes));
    } catch (const std::system_error& e) {
      throw session_error(std::string("heddle::offload: node ") + std::to_string(self) +
                          " cannot create its segment: " + e.what() +
                          (e.code().value() == EEXIST ? " (a run with the same session name is going on, or a "
                                                        "crashed one left /dev/shm/heddle." +
                                                            o_.session_name + ".*)"
                                                      : ""));
    }
    own_ctl_ = control_of(own_);
    own_ctl_->magic = control_magic;
    own_ctl_->nodes = o_.nodes;
    own_ctl_->node = self;
    own_ctl_->pid = ::getpid();
    own_ctl_->ring_bytes = o_.ring_bytes;
    own_ctl_->ready.store(1, std::memory_order_release);
    inbound_.resize(o_.nodes);
    dead_ = std::make_unique<std::atomic<bool>[]>(o_.nodes);
    for (node_id from = 0; from < o_.nodes; ++from) inbound_[from] = ring_in(own_, from);

    out_.resize(o_.nodes);
    const auto deadline = std::chrono::steady_clock::now() + o_.connect_timeout;
    for (node_id to = 0; to < o_.nodes; ++to) {
      if (to == self) continue;
      auto p = std::make_unique<peer_out>();
      for (;;) {
        try {
          p->seg = shm_segment::open(segment_name(to));
          if (p->seg.size() >= control_bytes && control_of(p->seg)->ready.load(std::memory_order_acquire) == 1) break;
        } catch (const std::system_error& e) {
          if (e.code().value() != ENOENT)
            throw session_error(std::string("heddle::offload: node ") + std::to_string(to) + "'s segment: " + e.what());
        }
        if (std::chrono::steady_clock::now() > deadline)
          throw peer_lost(to, "heddle::offload: node " + std::to_string(to) + " did not start within " +
                                  std::to_string(o_.connect_timeout.count()) + " ms (no " + segment_name(to) + ")");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      node_control* c = control_of(p->seg);
      if (c->magic != control_magic || c->nodes != o_.nodes || c->node != to || c->ring_bytes != o_.ring_bytes ||
          p->seg.size() != segment_bytes(o_.nodes, o_.ring_bytes))
        throw session_error("heddle::offload: " + segment_name(to) + " is not node " + std::to_string(to) + " of " +
                            std::to_string(o_.nodes) + " with " + std::to_string(o_.ring_bytes) + "-byte rings (node " +
                            std::to_string(c->node) + " of " + std::to_string(c->nodes) + ", " +
                            std::to_string(c->ring_bytes) + ")");
      p->ctl = c;
      p->ring = ring_in(p->seg, self);
      p->pid = c->pid;
      p->pidfd = pidfd_of(c->pid);
      out_[to] = std::move(p);
    }
  }

  bool send(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
            std::span<const std::byte> tail, bool wait, const std::shared_ptr<void>&) override {
    const std::size_t payload = head.size() + tail.size();
    if (ring_cell::prefix + message_header::size + payload > o_.ring_bytes / 4)
      return send_out_of_line(from, to, h, head, tail, wait);
    return write_record(to, payload, wait, [&](std::byte* c) {
      h.encode(c);
      std::byte* body = c + message_header::size;
      if (!head.empty()) std::memcpy(body, head.data(), head.size());
      if (!tail.empty()) std::memcpy(body + head.size(), tail.data(), tail.size());
    });
  }

  // The call path's frame. Its common case, a frame of one cell (a payload of up to 16 bytes) that
  // the ring has room for as last seen, in the lap's first cells, with the ring's lock free, is
  // written here with no call but the tail calls to the other cases (so this saves no registers);
  // the rest, as any frame, in write_record.
  bool send_packed(node_id from, node_id to, const message_header::words& header, std::span<const std::byte> payload,
                   bool wait) override {
    peer_out& p = *out_[to];
    if (payload.size() <= one_cell_payload && p.m.try_lock()) [[likely]] {
      const std::uint64_t pos = p.write_pos;
      if (p.ring.index(pos) < short_lap_cells && pos + 1 - p.seen_tail <= p.ring.cells()) [[likely]] {
        std::byte* c = p.ring.cell(pos);
        std::memcpy(c + ring_cell::prefix, header.data(), message_header::size);
        copy_small(c + ring_cell::prefix + message_header::size, payload);
        return publish(p, c, pos, 1);
      }
      p.m.unlock();
    }
    return send_packed_slowly(from, to, header, payload, wait);
  }

  bool poll() override {
    bool any = false;
    for (node_id from = 0; from < o_.nodes; ++from) {
      if (from == o_.node || dead_[from]) continue;
      for (int batch = 0; batch < 16 && take_one(from); ++batch) any = true;
    }
    return any;
  }

  bool pending() const override {
    for (node_id from = 0; from < o_.nodes; ++from) {
      if (from == o_.node || dead_[from]) continue;
      const std::uint64_t pos = read_pos_[from].load(std::memory_order_relaxed);
      if (ring_view::stamp(inbound_[from].cell(pos)).load(std::memory_order_acquire) == pos + 1) return true;
    }
    return false;
  }

  void sleep(std::chrono::nanoseconds timeout) override {
    own_ctl_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t bell = own_ctl_->doorbell.load(std::memory_order_seq_cst);
    if (!pending()) shared_futex_wait(own_ctl_->doorbell, bell, timeout.count());
    own_ctl_->sleepers.fetch_sub(1, std::memory_order_relaxed);
  }

  void interrupt() override {
    own_ctl_->doorbell.fetch_add(1, std::memory_order_seq_cst);
    shared_futex_wake(own_ctl_->doorbell, 1 << 30);
  }

  void check_peers() override {
    std::lock_guard lock(check_m_);
    for (node_id n = 0; n < o_.nodes; ++n) {
      if (n == o_.node || !out_[n] || out_[n]->exited) continue;
      if (process_exited(out_[n]->pidfd)) {
        out_[n]->exited = true;
        sink_->lost(n, "its process (pid " + std::to_string(out_[n]->pid) + ") exited");
      }
    }
  }

  // ---- buffers: segments that every node maps ----

  local_allocation allocate(std::uint64_t bytes, std::uint64_t id, std::size_t alignment) override {
    if (alignment > 4096)
      throw session_error("heddle::offload: shm buffers are page-aligned; alignment " + std::to_string(alignment) +
                          " asked");
    auto seg = std::make_shared<shm_segment>(shm_segment::create(buffer_name(o_.node, id), bytes ? bytes : 1));
    std::byte* data = seg->data();
    return {data, bytes, std::move(seg)};
  }

  // On the calling thread, whatever the size: a copy between the processes' memory is what a
  // transfer is here, and handing it to a worker would only add a wake-up.
  bool put_direct(const std::byte* local, node_id node, std::uint64_t id, std::uint64_t offset,
                  std::uint64_t bytes) override {
    if (node == o_.node) return false;
    std::byte* remote = mapped(node, id, offset, bytes);
    if (bytes) std::memcpy(remote, local, bytes);
    return true;
  }
  bool get_direct(node_id node, std::uint64_t id, std::uint64_t offset, std::byte* local,
                  std::uint64_t bytes) override {
    if (node == o_.node) return false;
    const std::byte* remote = mapped(node, id, offset, bytes);
    if (bytes) std::memcpy(local, remote, bytes);
    return true;
  }
  void forget(node_id owner, std::uint64_t id) override {
    std::lock_guard lock(maps_m_);
    maps_.erase({owner, id});
  }

 private:
  struct peer_out {
    shm_segment seg;
    node_control* ctl = nullptr;
    ring_view ring;                    // this node's ring in the peer's segment
    heddle::core_detail::spin_lock m;  // this process's senders to the peer, one at a time
    std::uint64_t write_pos = 0;
    std::uint64_t seen_tail = 0;
    std::uint64_t looked_in_lap = ~std::uint64_t{0};  // the start of the last lap short_lap_pad looked in
    std::int64_t pid = 0;
    int pidfd = -1;
    bool exited = false;
  };

  std::string segment_name(node_id n) const { return prefix_ + ".n" + std::to_string(n); }
  std::string buffer_name(node_id n, std::uint64_t id) const { return segment_name(n) + ".b" + std::to_string(id); }
  std::string transfer_name(node_id n, std::uint64_t seq) const { return segment_name(n) + ".m" + std::to_string(seq); }
  static node_control* control_of(const shm_segment& s) { return reinterpret_cast<node_control*>(s.data()); }
  ring_view ring_in(const shm_segment& s, node_id from) const {
    std::byte* base = s.data() + control_bytes + from * (sizeof(ring_control) + o_.ring_bytes);
    return ring_view(reinterpret_cast<ring_control*>(base), base + sizeof(ring_control),
                     o_.ring_bytes / ring_cell::bytes);
  }

  static constexpr std::size_t one_cell_payload = ring_cell::bytes - ring_cell::prefix - message_header::size;
  static_assert(one_cell_payload <= copy_small_bytes, "a one-cell frame's payload is copied by copy_small");

  [[gnu::noinline]] bool send_packed_slowly(node_id from, node_id to, const message_header::words& header,
                                            std::span<const std::byte> payload, bool wait) {
    if (ring_cell::prefix + message_header::size + payload.size() > o_.ring_bytes / 4) [[unlikely]]
      return send(from, to, message_header::unpack(header), payload, {}, wait, {});
    return write_record(to, payload.size(), wait, [&](std::byte* c) {
      std::memcpy(c, header.data(), message_header::size);
      if (!payload.empty()) std::memcpy(c + message_header::size, payload.data(), payload.size());
    });
  }

  // A record of `cells` cells written at `pos` (cell `c`), the lock held: its stamp publishes it,
  // the lock is let go, and a sleeping receiver is woken. Returns true.
  static bool publish(peer_out& p, std::byte* c, std::uint64_t pos, std::uint64_t cells) noexcept {
    ring_view::set_length_and_kind(c, static_cast<std::uint32_t>(cells), ring_cell::frame);
    ring_view::stamp(c).store(pos + 1, std::memory_order_release);
    p.write_pos = pos + cells;
    p.m.unlock();
    // The receiver announces its sleep before its last look (sleep()): either it sees this frame
    // then, or this sees it asleep here.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (p.ctl->sleepers.load(std::memory_order_relaxed)) [[unlikely]]
      return ring_doorbell(p);
    return true;
  }
  [[gnu::noinline]] static bool ring_doorbell(peer_out& p) noexcept {
    p.ctl->doorbell.fetch_add(1, std::memory_order_relaxed);
    shared_futex_wake(p.ctl->doorbell, 1);
    return true;
  }

  // Writes one frame record of `payload` bytes into the peer's ring: fill(cell) writes the header
  // and the payload from the cell's start on; then the stamp publishes it. The record fits in a
  // quarter of the ring (the caller checked). False, with nothing written, when !wait and the ring
  // or its lock is taken.
  template <class Fill>
  bool write_record(node_id to, std::size_t payload, bool wait, Fill&& fill) {
    peer_out& p = *out_[to];
    const std::uint64_t cells = (ring_cell::prefix + message_header::size + payload + ring_cell::bytes - 1) /
                                ring_cell::bytes;
    if (wait) p.m.lock();
    else if (!p.m.try_lock()) return false;
    const ring_view& ring = p.ring;
    std::uint64_t pos = p.write_pos;
    const std::uint64_t at = ring.index(pos);
    std::uint64_t pad = at + cells > ring.cells() ? ring.cells() - at : 0;
    if (at >= short_lap_cells && pad == 0 && pos - at != p.looked_in_lap) [[unlikely]]
      pad = short_lap_pad(p, pos, cells);  // once a lap, past its first cells
    try {
      if (!space_for(p, to, pos + pad + cells, wait)) {
        p.m.unlock();
        return false;
      }
    } catch (...) {  // the peer died while this waited for room
      p.m.unlock();
      throw;
    }
    if (pad) {
      std::byte* c = ring.cell(pos);
      ring_view::set_length_and_kind(c, static_cast<std::uint32_t>(pad), ring_cell::padding);
      ring_view::stamp(c).store(pos + 1, std::memory_order_release);
      pos += pad;
    }
    std::byte* c = ring.cell(pos);
    fill(c + ring_cell::prefix);
    return publish(p, c, pos, cells);
  }

  // A lap of the ring ends early, at its first record past short_lap_cells, when the receiver has
  // taken the lap's first records (their cells are free again): a padding record to the ring's end
  // turns the writer back to the first cell. Frames one at a time (a round trip's) then cycle
  // through 4 KiB of cells, lines that both cores keep in their caches, instead of through the
  // whole ring (1 MiB by default): a ring walked beyond a core's L2 cache costs a cache miss on
  // each side of each frame (on the Intel VM, whose L2 is 2 MiB a core, a round trip took 539 ns
  // more than the raw one with an 8 MiB ring, against 63 with 1 MiB; docs/benchmarks.md). Costs
  // one look at the receiver's position a lap, which a receiver that keeps up has just written; a
  // receiver behind (a burst of frames) keeps the whole ring for this lap.
  static constexpr std::uint64_t short_lap_cells = 64;
  [[gnu::noinline]] std::uint64_t short_lap_pad(peer_out& p, std::uint64_t pos, std::uint64_t cells) {
    const std::uint64_t pad = p.ring.cells() - p.ring.index(pos);
    p.looked_in_lap = pos - p.ring.index(pos);  // one look a lap
    p.seen_tail = p.ring.control().tail.load(std::memory_order_acquire);
    return pos + pad + cells - p.seen_tail <= p.ring.cells() ? pad : 0;
  }

  // Waits until the ring has room up to `end`; false at once if !wait. The common case (room as
  // last seen) is inlined into send; the look at the receiver's position and the wait are not.
  bool space_for(peer_out& p, node_id to, std::uint64_t end, bool wait) {
    if (end - p.seen_tail <= p.ring.cells()) [[likely]]
      return true;
    return wait_for_space(p, to, end, wait);
  }
  [[gnu::noinline]] bool wait_for_space(peer_out& p, node_id to, std::uint64_t end, bool wait) {
    const std::uint64_t n = p.ring.cells();
    // Spins while the peer drains the ring, then sleeps in short steps, looking whether it died.
    heddle::core_detail::spin_then_park spinner(heddle::core_detail::spin::worker_budget);
    for (;;) {
      p.seen_tail = p.ring.control().tail.load(std::memory_order_acquire);
      if (end - p.seen_tail <= n) return true;
      if (!wait) return false;
      if (!spinner.keep_spinning()) {
        if (process_exited(p.pidfd))
          throw peer_lost(to, "heddle::offload: node " + std::to_string(to) + " (pid " + std::to_string(p.pid) +
                                  ") exited");
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
  }

  bool send_out_of_line(node_id from, node_id to, const message_header& h, std::span<const std::byte> head,
                        std::span<const std::byte> tail, bool wait) {
    const std::uint64_t seq = next_transfer_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t bytes = head.size() + tail.size();
    shm_segment seg = shm_segment::create(transfer_name(from, seq), bytes);
    if (!head.empty()) std::memcpy(seg.data(), head.data(), head.size());
    if (!tail.empty()) std::memcpy(seg.data() + head.size(), tail.data(), tail.size());
    const std::uint64_t desc[2] = {seq, bytes};
    message_header small = h;
    small.flags |= message_out_of_line;
    small.payload_bytes = sizeof desc;
    if (!send(from, to, small, std::as_bytes(std::span(desc)), {}, wait, nullptr)) return false;  // seg unlinks itself
    seg.keep_name();  // the receiver unlinks it
    return true;
  }

  // Takes the next record from `from`'s ring, if there is one.
  bool take_one(node_id from) {
    const ring_view& ring = inbound_[from];
    const std::uint64_t pos = read_pos_[from].load(std::memory_order_relaxed);
    std::byte* c = ring.cell(pos);
    if (ring_view::stamp(c).load(std::memory_order_acquire) != pos + 1) return false;
    const std::uint32_t cells = ring_view::length(c);
    const std::uint32_t kind = ring_view::kind(c);
    if (cells == 0 || ring.index(pos) + cells > ring.cells() ||
        (kind != ring_cell::frame && kind != ring_cell::padding)) {
      corrupt(from, "a ring record of " + std::to_string(cells) + " cells, kind " + std::to_string(kind));
      return false;
    }
    if (kind == ring_cell::frame) {
      try {
        const std::size_t room = std::size_t{cells} * ring_cell::bytes - ring_cell::prefix - message_header::size;
        const message_header h = message_header::decode(std::span<const std::byte>(c + ring_cell::prefix,
                                                                                   message_header::size),
                                                        room);
        const std::span<const std::byte> payload(c + ring_cell::prefix + message_header::size, h.payload_bytes);
        if (h.flags & message_out_of_line) deliver_out_of_line(from, h, payload);
        else sink_->deliver(from, o_.node, h, payload);
      } catch (const decode_error& e) {
        corrupt(from, e.what());
        return false;
      }
    }
    // Cells after the first held payload: their first words are zeroed (shm_ring.hpp). A record's
    // first cell keeps its stamp, which can never match again: a one-cell call is only read here,
    // and its line is not pulled back from the sender's cache for a write.
    if (kind == ring_cell::frame)
      for (std::uint32_t i = 1; i < cells; ++i)
        ring_view::stamp(ring.cell(pos + i)).store(0, std::memory_order_relaxed);
    read_pos_[from].store(pos + cells, std::memory_order_relaxed);
    ring.control().tail.store(pos + cells, std::memory_order_release);
    return true;
  }

  void deliver_out_of_line(node_id from, const message_header& h, std::span<const std::byte> desc) {
    if (desc.size() != 16)
      throw decode_error("an out-of-line frame's descriptor of " + std::to_string(desc.size()) + " bytes");
    std::uint64_t seq, bytes;
    std::memcpy(&seq, desc.data(), 8);
    std::memcpy(&bytes, desc.data() + 8, 8);
    shm_segment seg;
    try {
      seg = shm_segment::open(transfer_name(from, seq));
    } catch (const std::system_error& e) {
      throw decode_error(std::string("an out-of-line frame whose segment cannot be opened: ") + e.what());
    }
    seg.unlink();
    if (seg.size() != bytes)
      throw decode_error("an out-of-line frame of " + std::to_string(bytes) + " bytes in a segment of " +
                         std::to_string(seg.size()));
    message_header whole = h;
    whole.flags &= static_cast<std::uint8_t>(~message_out_of_line);
    whole.payload_bytes = bytes;
    sink_->deliver(from, o_.node, whole, std::span<const std::byte>(seg.data(), bytes));
  }

  void corrupt(node_id from, const std::string& what) {
    dead_[from] = true;
    sink_->lost(from, "it sent a corrupt frame (" + what + ")");
  }

  std::byte* mapped(node_id node, std::uint64_t id, std::uint64_t offset, std::uint64_t bytes) {
    std::shared_ptr<shm_segment> seg;
    {
      std::lock_guard lock(maps_m_);
      auto it = maps_.find({node, id});
      if (it != maps_.end()) seg = it->second;
    }
    if (!seg) {
      try {
        seg = std::make_shared<shm_segment>(shm_segment::open(buffer_name(node, id)));
      } catch (const std::system_error&) {
        throw remote_error(node, "heddle::offload: node " + std::to_string(node) + " has no buffer " +
                                     std::to_string(id) + " (freed, or never allocated there)");
      }
      std::lock_guard lock(maps_m_);
      maps_.emplace(std::pair{node, id}, seg);
    }
    if (offset > seg->size() || bytes > seg->size() - offset)
      throw remote_error(node, "heddle::offload: bytes [" + std::to_string(offset) + ", " +
                                   std::to_string(offset + bytes) + ") are outside buffer " + std::to_string(id) +
                                   " of node " + std::to_string(node));
    return seg->data() + offset;
  }

  session_options o_;
  std::string prefix_;
  frame_sink* sink_ = nullptr;
  shm_segment own_;
  node_control* own_ctl_ = nullptr;
  std::vector<ring_view> inbound_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> read_pos_;
  std::unique_ptr<std::atomic<bool>[]> dead_;  // rings of peers that sent garbage: never read again
  std::vector<std::unique_ptr<peer_out>> out_;
  std::atomic<std::uint64_t> next_transfer_{1};
  std::mutex check_m_;
  std::mutex maps_m_;
  std::map<std::pair<node_id, std::uint64_t>, std::shared_ptr<shm_segment>> maps_;
};

}  // namespace

std::unique_ptr<transport> make_shm_transport(const session_options& o) { return std::make_unique<shm_transport>(o); }

}  // namespace heddle::am_detail
