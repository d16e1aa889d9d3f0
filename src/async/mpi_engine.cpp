// SPDX-License-Identifier: Apache-2.0
// The MPI engine of one runtime: the requests handed to io::wait_mpi, and one service thread that
// tests them all with MPI_Testsome. MPI cannot wake a thread when a request completes, so the
// thread polls: continuously for a while after each completion or new request (a message that
// answers another tends to follow soon), then with pauses doubling from 20 µs to 1 ms; a new
// request cuts a pause short. With nothing pending it sleeps until a request comes.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heddle/async/detail/mpi_support.hpp"
#include "heddle/async/mpi.hpp"
#include "op_state.hpp"
#include "service_thread.hpp"

namespace heddle::async_detail {

namespace {

using clock = std::chrono::steady_clock;
constexpr auto busy_for = std::chrono::microseconds(100);  // polling without a pause after activity
constexpr auto first_pause = std::chrono::microseconds(20);
constexpr auto longest_pause = std::chrono::milliseconds(1);

std::exception_ptr mpi_failure(int code, const std::string& context) {
  int error_class = code;
  MPI_Error_class(code, &error_class);
  return std::make_exception_ptr(mpi_error(error_class,
                                           "heddle::io::wait_mpi: " + context + ": " + mpi_error_text(code)));
}

struct mpi_op final : op_state<MPI_Status> {
  mpi_op() noexcept : op_state<MPI_Status>(&op_vtable<mpi_op>::table, "mpi") {}
};

class mpi_engine final : public core_detail::runtime_service, private service_thread {
 public:
  explicit mpi_engine(core_detail::runtime_core*) : service_thread("heddle-mpi", "mpi engine") { start_threads(); }
  ~mpi_engine() override { stop(); }

  core_detail::future_state<MPI_Status>* start(MPI_Request request) {
    auto* op = core_detail::make_record<mpi_op>();
    if (request == MPI_REQUEST_NULL) {
      MPI_Status empty{};
      empty.MPI_SOURCE = MPI_ANY_SOURCE;
      empty.MPI_TAG = MPI_ANY_TAG;
      empty.MPI_ERROR = MPI_SUCCESS;
      op->succeed(empty);
      return op;
    }
    // MULTIPLE: the engine's thread tests requests while the program's threads make MPI calls.
    if (const std::string why = mpi_unusable(MPI_THREAD_MULTIPLE); !why.empty()) {
      op->fail(std::make_exception_ptr(std::runtime_error("heddle::io::wait_mpi: " + why)));
      return op;
    }
    std::unique_lock lock(m_);
    if (stopping_) {
      lock.unlock();
      op->fail(stopped_error());
      return op;
    }
    incoming_.push_back({op, request});
    lock.unlock();
    cv_.notify_one();
    return op;
  }

  void stop() noexcept override { service_thread::stop(); }

 private:
  struct pending {
    mpi_op* op;
    MPI_Request request;
  };

  void request_stop() noexcept override {
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    cv_.notify_one();
  }

  // The service thread left its requests in incoming_.
  void fail_pending() noexcept override {
    for (const pending& p : incoming_) p.op->fail(stopped_error());
    incoming_.clear();
  }

  void run() override {
    std::vector<mpi_op*> ops;  // the requests being tested, with their records
    std::vector<MPI_Request> requests;
    std::vector<int> done;
    std::vector<MPI_Status> statuses;
    auto active_since = clock::now();
    auto pause = first_pause;
    for (;;) {
      {
        std::unique_lock lock(m_);
        if (ops.empty()) cv_.wait(lock, [&] { return stopping_ || !incoming_.empty(); });
        if (stopping_) {
          for (std::size_t i = 0; i < ops.size(); ++i) incoming_.push_back({ops[i], requests[i]});
          return;
        }
        if (!incoming_.empty()) {
          for (const pending& p : incoming_) {
            ops.push_back(p.op);
            requests.push_back(p.request);
          }
          incoming_.clear();
          active_since = clock::now();
          pause = first_pause;
        }
      }
      done.resize(requests.size());
      statuses.resize(requests.size());
      int count = 0;
      const int rc = MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, done.data(),
                                  statuses.data());
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        // MPI refused the test itself: every request here fails (they cannot be told apart).
        for (mpi_op* op : ops) op->fail(mpi_failure(rc, "MPI_Testsome"));
        ops.clear();
        requests.clear();
        continue;
      }
      if (count != MPI_UNDEFINED && count > 0) {
        for (int k = 0; k < count; ++k) {
          const int i = done[static_cast<std::size_t>(k)];
          const MPI_Status& st = statuses[static_cast<std::size_t>(k)];
          if (rc == MPI_ERR_IN_STATUS && st.MPI_ERROR != MPI_SUCCESS)
            ops[static_cast<std::size_t>(i)]->fail(mpi_failure(st.MPI_ERROR, "the request failed"));
          else ops[static_cast<std::size_t>(i)]->succeed(st);
          ops[static_cast<std::size_t>(i)] = nullptr;
        }
        // Completed requests are MPI_REQUEST_NULL now: drop them, keeping the others' order.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < ops.size(); ++i)
          if (ops[i]) {
            ops[kept] = ops[i];
            requests[kept] = requests[i];
            ++kept;
          }
        ops.resize(kept);
        requests.resize(kept);
        active_since = clock::now();
        pause = first_pause;
        continue;
      }
      if (clock::now() - active_since < busy_for) {
        std::this_thread::yield();
        continue;
      }
      std::unique_lock lock(m_);
      cv_.wait_for(lock, pause, [&] { return stopping_ || !incoming_.empty(); });
      pause = std::min<std::chrono::microseconds>(pause * 2, longest_pause);
    }
  }

  std::mutex m_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<pending> incoming_;  // handed over by start(); after stop, what was left
};

}  // namespace

heddle::core_detail::future_state<MPI_Status>* wait_mpi(heddle::core_detail::runtime_core* core, MPI_Request request) {
  try {
    return engine_of<mpi_engine>(core).start(request);
  } catch (const task_cancelled&) {
    return failed<MPI_Status>(std::current_exception());
  }
}

}  // namespace heddle::async_detail

namespace heddle {

// The key function of mpi_error: its type_info lives in heddle::mpi alone (heddle/core/export.hpp).
mpi_error::~mpi_error() = default;

}  // namespace heddle
