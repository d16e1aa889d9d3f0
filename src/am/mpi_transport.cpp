// SPDX-License-Identifier: Apache-2.0
// The mpi backend: the ranks of MPI_COMM_WORLD are the nodes, and heddle talks on a duplicate of it
// (its own communicator: a user's tags never meet heddle's). A frame of up to eager_bytes is one
// MPI message, received into one of the receives the polling thread keeps posted (frame_slots);
// the polling thread also completes the non-blocking sends (sends_), its own and those of senders
// that wait, which send straight from the caller's memory. A larger frame is two messages: the
// header (with the head if it fits), flagged out of line, then the rest on its own tag, which the
// receiver reads straight into the buffer or the caller's memory when it is a put's data or a get's
// reply (frame_sink::place) instead of copying it there from a frame. Every MPI call of heddle's is
// made under one lock, so an MPI library with MPI_THREAD_SERIALIZED is enough for heddle; the
// session asks for MPI_THREAD_MULTIPLE, which a program that makes MPI calls of its own while the
// session runs needs. A rank that dies ends the job (MPI's own rule under mpirun).
#include <mpi.h>
#include <time.h>

#include <climits>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "heddle/async/detail/mpi_support.hpp"
#include "heddle/core/detail/spin_wait.hpp"
#include "small_copy.hpp"
#include "transports.hpp"

namespace heddle::am_detail {

using heddle::async_detail::mpi_error_text;
using heddle::async_detail::mpi_unusable;
using heddle::core_detail::spin_pause;

namespace {

constexpr int frame_tag = 1;
constexpr int tail_tag = 2;  // the rest of the sender's last out-of-line frame
// Messages on frame_tag are at most this large. They go out with MPI_Send: within the eager limit
// of Open MPI's shared-memory and TCP transports (4 KiB and more), so the call never waits for the
// receiver; and they arrive in receives posted ahead (frame_slots of them), which MPI fills as the
// message comes in: no probe, no copy out of MPI's queue of unexpected messages.
constexpr std::size_t eager_bytes = 1024;
constexpr int frame_slots = 4;  // a power of two (posted_ring)
// A frame message up to this size is copied out of its receive slot, which is posted again when the
// transport next finds nothing to receive.
constexpr std::size_t copied_frame_bytes = 256;

class mpi_transport final : public transport {
 public:
  explicit mpi_transport(session_options& o) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // MULTIPLE if the library has it, so that the program's own MPI calls may run beside the
      // session's; heddle itself needs SERIALIZED only (it calls MPI under one lock).
      if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided); rc != MPI_SUCCESS)
        throw session_error("heddle::offload: MPI_Init_thread failed: " + mpi_error_text(rc));
      we_initialized_ = true;
    }
    // Whoever initialised MPI: heddle calls it from its polling thread and from senders, one at a
    // time (under m_), which needs MPI_THREAD_SERIALIZED; and MPI must not be finalised already.
    if (const std::string why = mpi_unusable(MPI_THREAD_SERIALIZED); !why.empty()) {
      if (we_initialized_) MPI_Finalize();
      throw session_error("heddle::offload: the mpi backend cannot start: " + why);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    int rank = 0, size = 0;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &size);
    o.node = static_cast<node_id>(rank);
    o.nodes = static_cast<node_id>(size);
    self_ = o.node;
  }
  ~mpi_transport() override {
    {
      std::lock_guard lock(m_);
      for (auto& s : sends_) MPI_Wait(&s.request, MPI_STATUS_IGNORE);
      sends_.clear();
      for (slot& f : slots_) {
        if (f.request == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&f.request);
        MPI_Wait(&f.request, MPI_STATUS_IGNORE);
      }
    }
    MPI_Comm_free(&comm_);
    if (we_initialized_) MPI_Finalize();
  }

  // The most payload a frame may carry: MPI counts are ints.
  static constexpr std::uint64_t max_payload() noexcept { return INT_MAX - message_header::size; }
  void start(frame_sink& sink) override {
    sink_ = &sink;
    std::lock_guard lock(m_);
    for (int i = 0; i < frame_slots; ++i) check(self_, repost(i));
  }

  // The engine packed the header: a small frame goes out with its words as they are.
  bool send_packed(node_id from, node_id to, const message_header::words& header, std::span<const std::byte> payload,
                   bool wait) override {
    if (message_header::size + payload.size() <= eager_bytes) [[likely]]
      return send_eager(to, header, payload, {}, wait);
    return send(from, to, message_header::unpack(header), payload, {}, wait, {});
  }

  bool send(node_id, node_id to, const message_header& h, std::span<const std::byte> head,
            std::span<const std::byte> tail, bool wait, const std::shared_ptr<void>& tail_owner) override {
    if (h.payload_bytes > max_payload())
      throw session_error("heddle::offload: a frame of " + std::to_string(h.payload_bytes) +
                          " bytes: the mpi backend carries at most " + std::to_string(max_payload()) + " per frame");
    if (message_header::size + head.size() + tail.size() <= eager_bytes) [[likely]]
      return send_eager(to, h.pack(), head, tail, wait);
    // A larger frame is split: the header (with the head if it fits) flagged out of line, then the rest.
    const bool head_inline = message_header::size + head.size() <= eager_bytes;
    message_header fh = h;
    fh.flags |= message_out_of_line;
    std::byte hdr[message_header::size];
    fh.encode(hdr);
    const std::span<const std::byte> header(hdr, sizeof hdr);

    // A sender that may wait sends from the caller's memory and waits until MPI is done with it.
    // Its sends join sends_, so that the polling thread, which holds m_ most of the time, completes
    // them too: a waiting sender that had to win m_ from it for every test would starve.
    std::atomic<int> unfinished{0};
    std::atomic<int>* count = wait ? &unfinished : nullptr;
    std::exception_ptr failed;  // a send that MPI refused, after one it took: wait for that one first
    try {
      // Both messages of a split frame under one hold of the lock: another sender's frame never
      // comes between them, so the receiver pairs each frame with the right tail.
      std::unique_lock lock(m_, std::defer_lock);
      if (wait) lock.lock();
      else if (!lock.try_lock()) return false;
      if (head_inline) {
        post(to, frame_tag, {header, head}, {}, count);
        post(to, tail_tag, {tail}, tail_owner, count);
      } else {
        post(to, frame_tag, {header}, {}, count);
        post(to, tail_tag, {head, tail}, tail_owner, count);
      }
    } catch (...) {
      failed = std::current_exception();
    }
    for (unsigned n = 1; unfinished.load(std::memory_order_acquire) != 0; ++n) {
      if (m_.try_lock()) {
        complete_sends();
        m_.unlock();
      }
      spin_pause(n);
    }
    if (failed) std::rethrow_exception(failed);
    return true;
  }

  bool poll() override {
    bool any = false;
    for (int batch = 0; batch < 16; ++batch) {
      int done = 0, count = 0, index = 0;
      MPI_Status st;
      alignas(16) std::byte small[copied_frame_bytes];
      {
        std::lock_guard lock(m_);
        // A completed send counts as traffic: the peer that took it is busy with this node and
        // likely to send soon (a get's requester, its next request), so the receiver stays awake.
        if (!sends_.empty()) any |= complete_sends();
        // Receives complete in the order they were posted: only the oldest can be done.
        if (posted_.empty()) throw peer_lost(self_, "heddle::offload: MPI refused to post a receive");
        index = posted_.front();
        const int rc = MPI_Test(&slots_[index].request, &done, &st);
        if (rc != MPI_SUCCESS && !done) check(self_, rc);
        if (!done) {
          // Nothing arrived: the time to post again the slots that frames left (off the path of the
          // frame that freed them, and of its reply, which a repost right away would delay by an
          // MPI_Irecv: some 400 instructions on each side of a call).
          if (unposted_count_ != 0) repost_unposted();
          return any;
        }
        posted_.pop_front();
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (rc != MPI_SUCCESS) count = -1;  // done with an error: more than a frame may be, truncated
        // A small frame leaves its slot at once; the slot is posted again when nothing arrives,
        // or at once when fewer than half the slots are still posted.
        if (count >= 0 && static_cast<std::size_t>(count) <= sizeof small) {
          // Up to a line's bytes as one fixed copy (the slot holds eager_bytes): no call of memcpy.
          if (count <= 64) [[likely]]
            std::memcpy(small, slots_[index].bytes, 64);
          else std::memcpy(small, slots_[index].bytes, static_cast<std::size_t>(count));
          unposted_[unposted_count_++] = index;
          if (posted_.size() < frame_slots / 2) repost_unposted();
          index = -1;
        }
      }
      any = true;
      const node_id from = static_cast<node_id>(st.MPI_SOURCE);
      if (index < 0) {
        try {
          deliver(from, std::span<const std::byte>(small, static_cast<std::size_t>(count)));
        } catch (const decode_error& e) {
          sink_->lost(from, std::string("it sent a corrupt frame (") + e.what() + ")");
        }
        continue;
      }
      // Posted again whatever happens below, last in line.
      struct repost_at_exit {
        mpi_transport* t;
        int index;
        ~repost_at_exit() {
          std::lock_guard lock(t->m_);
          t->repost(index);
        }
      } again{this, index};
      try {
        if (count < 0) throw decode_error("a frame message of more than " + std::to_string(eager_bytes) + " bytes");
        deliver(from, std::span<const std::byte>(slots_[index].bytes, static_cast<std::size_t>(count)));
      } catch (const decode_error& e) {
        sink_->lost(from, std::string("it sent a corrupt frame (") + e.what() + ")");
      }
    }
    return any;
  }

  bool pending() const override { return false; }

  // MPI cannot wake a thread: the receiver looks every so often, backing off to a millisecond.
  void sleep(std::chrono::nanoseconds timeout) override {
    {
      // A send in flight progresses only inside MPI calls: no sleep until it is complete.
      std::lock_guard lock(m_);
      if (unposted_count_ != 0) repost_unposted();
      complete_sends();
      if (!sends_.empty()) return;
    }
    const auto until = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::microseconds(20);
    while (!interrupted_.exchange(false) && std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard lock(m_);
        int found = 0;
        if (!posted_.empty())
          MPI_Request_get_status(slots_[posted_.front()].request, &found, MPI_STATUS_IGNORE);  // leaves it to poll()
        complete_sends();
        if (found) return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
  void interrupt() override { interrupted_ = true; }

 private:
  // A small frame (every call with small arguments, every reply): assembled here and sent with
  // MPI_Send under one hold of the lock, done when it returns (eager): nothing to wait for.
  bool send_eager(node_id to, const message_header::words& header, std::span<const std::byte> head,
                  std::span<const std::byte> tail, bool wait) {
    std::byte frame[eager_bytes];
    std::memcpy(frame, header.data(), message_header::size);
    if (tail.empty() && head.size() <= copy_small_bytes) [[likely]] {  // a call's few bytes, a result
      copy_small(frame + message_header::size, head);
    } else {
      if (!head.empty()) std::memcpy(frame + message_header::size, head.data(), head.size());
      if (!tail.empty()) std::memcpy(frame + message_header::size + head.size(), tail.data(), tail.size());
    }
    const std::size_t frame_bytes = message_header::size + head.size() + tail.size();
    std::unique_lock lock(m_, std::defer_lock);
    if (wait) lock.lock();
    else if (!lock.try_lock()) return false;
    check(to, MPI_Send(frame, static_cast<int>(frame_bytes), MPI_BYTE, static_cast<int>(to), frame_tag, comm_));
    return true;
  }

  // Receives posted ahead for frame messages (polling thread; their MPI calls under m_).
  struct slot {
    alignas(64) std::byte bytes[eager_bytes];
    MPI_Request request = MPI_REQUEST_NULL;
  };
  struct outgoing {
    std::vector<std::byte> bytes;
    std::shared_ptr<void> owner;  // keeps a tail sent where it lies alive until the send completes
    MPI_Request request;
    std::atomic<int>* unfinished = nullptr;  // a waiting sender's count, dropped on completion
  };

  // A frame message from `from`: delivers it, reading the rest of an out-of-line frame first.
  void deliver(node_id from, std::span<const std::byte> message) {
    message_header h = message_header::decode_frame(message, max_payload());
    const std::span<const std::byte> head = message.subspan(message_header::size);
    if (!(h.flags & message_out_of_line)) return sink_->deliver(from, self_, h, head);
    h.flags &= static_cast<std::uint8_t>(~message_out_of_line);
    const placement where = sink_->place(from, self_, h, head);
    if (where.data) {
      receive_rest(from, where.data, h.payload_bytes - head.size());
      h.flags |= message_placed;
      return sink_->deliver(from, self_, h, head);
    }
    // The whole payload in one piece: the head, then the rest after it.
    reserve(h.payload_bytes);
    if (!head.empty()) std::memcpy(in_.get(), head.data(), head.size());
    receive_rest(from, in_.get() + head.size(), h.payload_bytes - head.size());
    sink_->deliver(from, self_, h, std::span<const std::byte>(in_.get(), h.payload_bytes));
  }

  // Posts slot `index`'s receive (again), last in line; m_ held. MPI's error code (the slot stays
  // unposted if it fails: fewer slots, frames still arrive).
  int repost(int index) noexcept {
    slot& f = slots_[index];
    const int rc = MPI_Irecv(f.bytes, static_cast<int>(eager_bytes), MPI_BYTE, MPI_ANY_SOURCE, frame_tag, comm_,
                             &f.request);
    if (rc == MPI_SUCCESS) posted_.push_back(index);
    return rc;
  }

  // Posts again the slots small frames left, m_ held. A failure leaves one slot fewer: frames
  // still arrive (none left: poll's error).
  void repost_unposted() noexcept {
    for (int i = 0; i < unposted_count_; ++i) (void)repost(unposted_[i]);
    unposted_count_ = 0;
  }

  // One message of `blocks` (empty ones skipped) with `tag`, m_ held. Up to eager_bytes: copied and
  // sent with MPI_Send, done on return. Larger: a non-blocking send recorded in sends_, which
  // whoever holds m_ next completes (complete_sends). With `unfinished`, the caller's count of its
  // sends in flight, the message goes from where the blocks lie and the count drops when it is
  // complete; without (the polling thread, which does not wait), it goes from copies of the blocks
  // but a last one that `last_owner` keeps alive.
  void post(node_id to, int tag, std::initializer_list<std::span<const std::byte>> blocks,
            const std::shared_ptr<void>& last_owner, std::atomic<int>* unfinished) {
    std::size_t total = 0;
    for (auto b : blocks) total += b.size();
    if (total <= eager_bytes) {
      std::byte frame[eager_bytes];
      std::size_t at = 0;
      for (auto b : blocks)
        if (!b.empty()) std::memcpy(frame + std::exchange(at, at + b.size()), b.data(), b.size());
      check(to, MPI_Send(frame, static_cast<int>(total), MPI_BYTE, static_cast<int>(to), tag, comm_));
      return;
    }
    std::span<const std::byte> where[3];
    std::size_t n = 0;
    outgoing& s = sends_.emplace_back();
    if (unfinished) {
      s.unfinished = unfinished;
      unfinished->fetch_add(1, std::memory_order_relaxed);
      for (auto b : blocks)
        if (!b.empty()) where[n++] = b;
    } else {
      const std::span<const std::byte> last = *(blocks.end() - 1);
      const bool by_reference = last_owner && !last.empty();
      s.bytes.resize(total - (by_reference ? last.size() : 0));
      std::size_t at = 0, i = 0;
      for (auto b : blocks)
        if (++i < blocks.size() || !by_reference)
          if (!b.empty()) std::memcpy(s.bytes.data() + std::exchange(at, at + b.size()), b.data(), b.size());
      if (!s.bytes.empty()) where[n++] = s.bytes;
      if (by_reference) {
        s.owner = last_owner;
        where[n++] = last;
      }
    }
    try {
      isend(to, tag, std::span(where, n), &s.request);
    } catch (...) {
      if (unfinished) unfinished->fetch_sub(1, std::memory_order_relaxed);
      sends_.pop_back();
      throw;
    }
  }

  // A non-blocking send of the blocks as one message: one contiguous block as it is (MPI may then
  // move it in one copy, process to process), several as an hindexed type.
  void isend(node_id to, int tag, std::span<const std::span<const std::byte>> blocks, MPI_Request* request) {
    if (blocks.size() == 1) {
      check(to, MPI_Isend(blocks[0].data(), static_cast<int>(blocks[0].size()), MPI_BYTE, static_cast<int>(to), tag,
                          comm_, request));
      return;
    }
    MPI_Aint displacements[3];
    int lengths[3];
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      MPI_Get_address(blocks[i].data(), &displacements[i]);
      lengths[i] = static_cast<int>(blocks[i].size());
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(static_cast<int>(blocks.size()), lengths, displacements, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    const int rc = MPI_Isend(MPI_BOTTOM, 1, type, static_cast<int>(to), tag, comm_, request);
    MPI_Type_free(&type);
    check(to, rc);
  }

  // Reads the rest of `from`'s out-of-line frame into `into`. The polling thread waits for it (so
  // that frames are delivered in the order they were sent), leaving the lock to senders between
  // tests; the sender posted it together with the frame.
  void receive_rest(node_id from, std::byte* into, std::uint64_t bytes) {
    MPI_Request request;
    {
      std::lock_guard lock(m_);
      check(from,
            MPI_Irecv(into, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(from), tail_tag, comm_, &request));
    }
    for (unsigned n = 1;; ++n) {
      int done = 0;
      MPI_Status st;
      {
        std::lock_guard lock(m_);
        check(from, MPI_Test(&request, &done, &st));
        complete_sends();
      }
      if (done) {
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (static_cast<std::uint64_t>(count) != bytes)
          throw decode_error("the rest of a frame in " + std::to_string(count) + " bytes, " + std::to_string(bytes) +
                             " announced");
        return;
      }
      spin_pause(n);
    }
  }

  // Room for `bytes` in in_ (its contents need not be kept).
  void reserve(std::size_t bytes) {
    if (bytes <= in_capacity_) return;
    in_.reset(new std::byte[bytes]);  // not value-initialised
    in_capacity_ = bytes;
  }

  // True if any send completed.
  bool complete_sends() {
    bool any = false;
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      if (!done) {
        ++it;
        continue;
      }
      any = true;
      if (it->unfinished) it->unfinished->fetch_sub(1, std::memory_order_release);
      it = sends_.erase(it);
    }
    return any;
  }
  void check(node_id peer, int rc) {
    if (rc != MPI_SUCCESS)
      throw peer_lost(peer, "heddle::offload: MPI with rank " + std::to_string(peer) + ": " + mpi_error_text(rc));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool we_initialized_ = false;
  node_id self_ = 0;
  frame_sink* sink_ = nullptr;
  // Every MPI call. A spin lock: each hold is one or two MPI calls, and the polling thread takes it
  // for every look at the wire, where a mutex's lock and unlock cost more than the look's own code.
  heddle::core_detail::spin_lock m_;
  std::list<outgoing> sends_;  // non-blocking sends not yet complete
  slot slots_[frame_slots];
  // The slots posted, in the order they were (under m_): a ring of frame_slots, as no slot is
  // posted twice.
  struct posted_ring {
    int at[frame_slots] = {};
    unsigned head = 0, count = 0;
    bool empty() const noexcept { return count == 0; }
    int size() const noexcept { return static_cast<int>(count); }
    int front() const noexcept { return at[head % frame_slots]; }
    void pop_front() noexcept {
      ++head;
      --count;
    }
    void push_back(int index) noexcept { at[(head + count++) % frame_slots] = index; }
  } posted_;
  int unposted_[frame_slots] = {};  // slots small frames left, to post again (under m_)
  int unposted_count_ = 0;
  std::unique_ptr<std::byte[]> in_;  // an out-of-line frame's payload being delivered (polling thread)
  std::size_t in_capacity_ = 0;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

std::unique_ptr<transport> make_mpi_transport(session_options& o) { return std::make_unique<mpi_transport>(o); }

}  // namespace heddle::am_detail
