// The mpi backend: the ranks of MPI_COMM_WORLD are the nodes, and heddle talks on a duplicate of it
// (its own communicator: a user's tags never meet heddle's). A frame is one MPI message. The
// polling thread takes them with MPI_Improbe/MPI_Mrecv (a matched probe: safe beside other
// threads' MPI calls) and completes its non-blocking sends; a sender that may wait sends straight
// from the caller's memory. Every MPI call of heddle's is made under one lock, so an MPI library
// with MPI_THREAD_SERIALIZED is enough for heddle; the session asks for MPI_THREAD_MULTIPLE, which
// a program that makes MPI calls of its own while the session runs needs. A rank that dies ends
// the job (MPI's own rule under mpirun).
#include <mpi.h>
#include <time.h>

#include <climits>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "transports.hpp"

namespace heddle::offload::detail {

namespace {

constexpr int frame_tag = 1;
// Frames up to this size go out with MPI_Send: within the eager limit of Open MPI's shared-memory
// and TCP transports (4 KiB and more), so the call never waits for the receiver.
constexpr std::size_t eager_bytes = 1024;

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

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
      if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        throw session_error("heddle::offload: this MPI library offers no MPI_THREAD_SERIALIZED");
      }
      we_initialized_ = true;
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
    }
    MPI_Comm_free(&comm_);
    if (we_initialized_) MPI_Finalize();
  }

  // The most payload a frame may carry: MPI counts are ints.
  static constexpr std::uint64_t max_payload() noexcept { return INT_MAX - message_header::size; }
  void start(frame_sink& sink) override { sink_ = &sink; }

  bool send(node_id, node_id to, const message_header& h, std::span<const std::byte> head, std::span<const std::byte> tail,
            bool wait, const std::shared_ptr<void>& tail_owner) override {
    if (h.payload_bytes > max_payload())
      throw session_error("heddle::offload: a frame of " + std::to_string(h.payload_bytes) +
                          " bytes: the mpi backend carries at most " + std::to_string(max_payload()) + " per frame");
    const std::size_t frame_bytes = message_header::size + head.size() + tail.size();
    if (frame_bytes <= eager_bytes) {
      // Small enough for MPI's eager protocol: MPI_Send returns once the bytes are copied out,
      // without waiting for the peer, so even the polling thread may use it (and no request to
      // complete later).
      std::byte frame[eager_bytes];
      h.encode(frame);
      if (!head.empty()) std::memcpy(frame + message_header::size, head.data(), head.size());
      if (!tail.empty()) std::memcpy(frame + message_header::size + head.size(), tail.data(), tail.size());
      std::unique_lock lock(m_, std::defer_lock);
      if (wait) lock.lock();
      else if (!lock.try_lock()) return false;
      check(to, MPI_Send(frame, static_cast<int>(frame_bytes), MPI_BYTE, static_cast<int>(to), frame_tag, comm_));
      return true;
    }
    if (!wait) {
      // The polling thread: a non-blocking send, completed by later polls, of a copy of the header
      // and head, and of the tail where it lies if something keeps it alive (else copied too).
      std::unique_lock lock(m_, std::try_to_lock);
      if (!lock) return false;
      outgoing& s = sends_.emplace_back();
      const std::size_t copied = message_header::size + head.size() + (tail_owner ? 0 : tail.size());
      s.bytes.resize(copied);
      h.encode(s.bytes.data());
      if (!head.empty()) std::memcpy(s.bytes.data() + message_header::size, head.data(), head.size());
      if (!tail_owner && !tail.empty()) std::memcpy(s.bytes.data() + message_header::size + head.size(), tail.data(), tail.size());
      if (!tail_owner || tail.empty()) {
        check(to, MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, static_cast<int>(to), frame_tag, comm_,
                            &s.request));
        return true;
      }
      s.owner = tail_owner;
      MPI_Aint displacements[2];
      int lengths[2] = {static_cast<int>(copied), static_cast<int>(tail.size())};
      MPI_Get_address(s.bytes.data(), &displacements[0]);
      MPI_Get_address(tail.data(), &displacements[1]);
      MPI_Datatype type;
      MPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &type);
      MPI_Type_commit(&type);
      const int rc = MPI_Isend(MPI_BOTTOM, 1, type, static_cast<int>(to), frame_tag, comm_, &s.request);
      MPI_Type_free(&type);
      check(to, rc);
      return true;
    }
    // Straight from the caller's memory: the header, head and tail as one message of three blocks.
    std::byte hdr[message_header::size];
    h.encode(hdr);
    MPI_Aint displacements[3];
    int lengths[3] = {static_cast<int>(message_header::size), static_cast<int>(head.size()), static_cast<int>(tail.size())};
    MPI_Get_address(hdr, &displacements[0]);
    MPI_Get_address(head.data() ? head.data() : reinterpret_cast<const std::byte*>(hdr), &displacements[1]);
    MPI_Get_address(tail.data() ? tail.data() : reinterpret_cast<const std::byte*>(hdr), &displacements[2]);
    MPI_Request request;
    {
      std::lock_guard lock(m_);
      MPI_Datatype type;
      MPI_Type_create_hindexed(3, lengths, displacements, MPI_BYTE, &type);
      MPI_Type_commit(&type);
      const int rc = MPI_Isend(MPI_BOTTOM, 1, type, static_cast<int>(to), frame_tag, comm_, &request);
      MPI_Type_free(&type);
      check(to, rc);
    }
    for (unsigned spins = 0;; ++spins) {
      int done = 0;
      {
        std::lock_guard lock(m_);
        check(to, MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      }
      if (done) return true;
      if (spins > 100) std::this_thread::yield();
    }
  }

  bool poll() override {
    bool any = false;
    for (int batch = 0; batch < 16; ++batch) {
      int found = 0, source = 0;
      {
        std::lock_guard lock(m_);
        complete_sends();
        MPI_Message msg;
        MPI_Status st;
        check(self_, MPI_Improbe(MPI_ANY_SOURCE, frame_tag, comm_, &found, &msg, &st));
        if (!found) return any;
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        source = st.MPI_SOURCE;
        if (static_cast<std::size_t>(count) > in_capacity_) {
          in_.reset(new std::byte[static_cast<std::size_t>(count)]);  // not value-initialised
          in_capacity_ = static_cast<std::size_t>(count);
        }
        in_size_ = static_cast<std::size_t>(count);
        check(static_cast<node_id>(source), MPI_Mrecv(in_.get(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE));
      }
      any = true;
      const node_id from = static_cast<node_id>(source);
      try {
        const std::span<const std::byte> frame(in_.get(), in_size_);
        const message_header h = message_header::decode(frame, max_payload());
        if (h.payload_bytes != in_size_ - message_header::size)
          throw decode_error("a frame whose header says " + std::to_string(h.payload_bytes) + " bytes of payload in a message of " +
                             std::to_string(in_size_) + " bytes");
        sink_->deliver(from, self_, h, frame.subspan(message_header::size));
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
      complete_sends();
      if (!sends_.empty()) return;
    }
    const auto until = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::microseconds(20);
    while (!interrupted_.exchange(false) && std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard lock(m_);
        int found = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, frame_tag, comm_, &found, MPI_STATUS_IGNORE);
        complete_sends();
        if (found) return;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(1000));
    }
  }
  void interrupt() override { interrupted_ = true; }

 private:
  struct outgoing {
    std::vector<std::byte> bytes;
    std::shared_ptr<void> owner;  // keeps a tail sent where it lies alive until the send completes
    MPI_Request request;
  };

  void complete_sends() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? sends_.erase(it) : std::next(it);
    }
  }
  void check(node_id peer, int rc) {
    if (rc != MPI_SUCCESS) throw peer_lost(peer, "heddle::offload: MPI with rank " + std::to_string(peer) + ": " + mpi_error_text(rc));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  bool we_initialized_ = false;
  node_id self_ = 0;
  frame_sink* sink_ = nullptr;
  std::mutex m_;                // every MPI call
  std::list<outgoing> sends_;   // non-blocking sends not yet complete
  std::unique_ptr<std::byte[]> in_;  // the frame being delivered (polling thread)
  std::size_t in_capacity_ = 0, in_size_ = 0;
  std::atomic<bool> interrupted_{false};
};

}  // namespace

std::unique_ptr<transport> make_mpi_transport(session_options& o) { return std::make_unique<mpi_transport>(o); }

}  // namespace heddle::offload::detail
