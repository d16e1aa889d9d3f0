// SPDX-License-Identifier: Apache-2.0
// io::wait_mpi: MPI requests as futures, under `mpirun -np 2` (both ranks run every test, each
// against the other). Values are checked on arrival, in continuations that run on heddle's workers.
#include <gtest/gtest.h>
#include <mpi.h>
#include <reproduce.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <heddle/async/mpi.hpp>
#include <heddle/heddle.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int other() { return 1 - rank(); }
int ranks() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Each test talks on its own duplicate: a test's stray message never reaches the next.
struct comm {
  MPI_Comm c = MPI_COMM_NULL;
  comm() { MPI_Comm_dup(MPI_COMM_WORLD, &c); }
  ~comm() { MPI_Comm_free(&c); }
};

TEST(WaitMpi, AMessageCompletesItsFutureWithItsStatus) {
  heddle::runtime rt(2);
  comm k;
  std::int64_t in = 0, out = 1000 + rank();
  MPI_Request recv, send;
  MPI_Irecv(&in, 1, MPI_INT64_T, other(), 7, k.c, &recv);
  MPI_Isend(&out, 1, MPI_INT64_T, other(), 7, k.c, &send);
  heddle::future<std::int64_t> got = heddle::io::wait_mpi(rt, recv).then([&](MPI_Status st) {
    return st.MPI_SOURCE == other() && st.MPI_TAG == 7 ? in : -1;
  });
  heddle::io::wait_mpi(rt, send).get();
  EXPECT_EQ(got.get(), 1000 + other());
}

// A coroutine exchanging rounds of messages with the other rank: each co_await of an MPI request
// suspends it (no worker held) until the request completes; values checked round by round.
heddle::co_task<int> exchanges(MPI_Comm c, int rounds) {
  int good = 0;
  for (int r = 0; r < rounds; ++r) {
    std::int64_t in = -1, out = 100 * r + rank();
    MPI_Request recv, send;
    MPI_Irecv(&in, 1, MPI_INT64_T, other(), 9, c, &recv);
    MPI_Isend(&out, 1, MPI_INT64_T, other(), 9, c, &send);
    const MPI_Status st = co_await heddle::io::wait_mpi(recv);
    co_await heddle::io::wait_mpi(send);
    good += st.MPI_SOURCE == other() && in == 100 * r + other();
  }
  co_return good;
}

TEST(WaitMpi, ACoroutineAwaitsRequests) {
  heddle::runtime rt(1);
  comm k;
  EXPECT_EQ(rt.spawn(exchanges(k.c, 50)).get(), 50);
}

TEST(WaitMpi, ANullRequestIsCompleteAtOnce) {
  heddle::runtime rt(1);
  const MPI_Status st = heddle::io::wait_mpi(rt, MPI_REQUEST_NULL).get();
  EXPECT_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  EXPECT_EQ(st.MPI_TAG, MPI_ANY_TAG);
}

// Stress: many receives outstanding at once, completed in any order, each checked.
TEST(WaitMpi, TwoThousandOutstandingRequests) {
  heddle::runtime rt(2);
  comm k;
  constexpr int n = 1000;
  std::vector<std::int32_t> in(n, -1), out(n);
  std::iota(out.begin(), out.end(), rank() * 100000);
  std::vector<heddle::future<int>> checks;
  std::vector<heddle::future<MPI_Status>> sends;
  for (int i = 0; i < n; ++i) {
    MPI_Request r;
    MPI_Irecv(&in[i], 1, MPI_INT32_T, other(), i, k.c, &r);
    checks.push_back(heddle::io::wait_mpi(rt, r).then([&in, i](MPI_Status st) {
      return st.MPI_TAG == i && in[i] == other() * 100000 + i ? 1 : 0;
    }));
  }
  for (int i = n - 1; i >= 0; --i) {  // sent in the reverse order of the receives
    MPI_Request r;
    MPI_Isend(&out[i], 1, MPI_INT32_T, other(), i, k.c, &r);
    sends.push_back(heddle::io::wait_mpi(rt, r));
  }
  const std::vector<int> ok = heddle::when_all(std::move(checks)).get();
  EXPECT_EQ(std::accumulate(ok.begin(), ok.end(), 0), n);
  for (auto& s : heddle::when_all(std::move(sends)).get()) EXPECT_EQ(s.MPI_ERROR, MPI_SUCCESS);
}

// A ping-pong driven by continuations alone: each arrival's task answers it and posts the next
// receive. No thread waits for a message: one worker is enough.
TEST(WaitMpi, ContinuationsDriveAPingPong) {
  heddle::runtime rt(1);
  comm k;
  constexpr int rounds = 200;
  std::atomic<int> received{0};
  std::int64_t in = 0, out = 0;
  heddle::promise<void> finished(rt);
  std::function<void()> post_receive;
  // Rank 0 sends first; each side answers what it gets with the value plus one.
  post_receive = [&] {
    MPI_Request r;
    MPI_Irecv(&in, 1, MPI_INT64_T, other(), 1, k.c, &r);
    (void)heddle::io::wait_mpi(rt, r).then([&](MPI_Status) {  // dropped: the chain ends in `finished`
      ++received;
      out = in + 1;
      MPI_Request s;
      MPI_Isend(&out, 1, MPI_INT64_T, other(), 1, k.c, &s);
      MPI_Wait(&s, MPI_STATUS_IGNORE);
      if (received.load() < rounds) post_receive();
      else finished.set_value();
    });
  };
  post_receive();
  if (rank() == 0) {
    MPI_Request s;
    MPI_Isend(&out, 1, MPI_INT64_T, other(), 1, k.c, &s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
  }
  finished.get_future().get();
  EXPECT_EQ(received.load(), rounds);
  // Rank 0 got 1, 3, 5, ...; rank 1 got 0, 2, 4, ...: the last value says every message came.
  EXPECT_EQ(in, 2 * (rounds - 1) + (rank() == 0 ? 1 : 0));
  if (rank() == 1) {  // rank 0's last answer is still on its way: take it
    std::int64_t last = 0;
    MPI_Recv(&last, 1, MPI_INT64_T, other(), 1, k.c, MPI_STATUS_IGNORE);
    EXPECT_EQ(last, 2 * rounds);
  }
}

// A receive too small for its message fails its future with MPI's error, not the program.
TEST(WaitMpi, ATruncatedMessageFailsTheFuture) {
  heddle::runtime rt(1);
  comm k;
  MPI_Comm_set_errhandler(k.c, MPI_ERRORS_RETURN);
  std::int64_t big[4] = {1, 2, 3, 4};
  std::int64_t small = 0;
  MPI_Request recv, send;
  MPI_Irecv(&small, 1, MPI_INT64_T, other(), 3, k.c, &recv);
  MPI_Isend(big, 4, MPI_INT64_T, other(), 3, k.c, &send);
  heddle::io::wait_mpi(rt, send).get();
  try {
    heddle::io::wait_mpi(rt, recv).get();
    ADD_FAILURE() << "a truncated receive completed";
  } catch (const heddle::mpi_error& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_TRUNCATE);
    EXPECT_NE(std::string(e.what()).find("heddle::io::wait_mpi"), std::string::npos) << e.what();
  }
}

// `async_mpi_test --before-init`: wait_mpi before MPI_Init is a clear error, not a crash.
int before_init() {
  heddle::runtime rt(1);
  MPI_Request fake = reinterpret_cast<MPI_Request>(&rt);  // never handed to MPI: the check comes first
  try {
    heddle::io::wait_mpi(rt, fake).get();
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find("MPI is not initialised") != std::string::npos) {
      std::printf("ok: %s\n", e.what());
      return 0;
    }
    std::fprintf(stderr, "unexpected error: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "wait_mpi before MPI_Init did not fail\n");
  return 1;
}

// `async_mpi_test --single`: wait_mpi with MPI initialised at MPI_THREAD_SINGLE is an error that
// names the level MPI runs at and the one heddle needs.
int single_thread_level() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided);
  int rc = 1;
  {
    heddle::runtime rt(1);
    MPI_Request fake = reinterpret_cast<MPI_Request>(&rt);  // never handed to MPI: the check comes first
    try {
      heddle::io::wait_mpi(rt, fake).get();
      std::fprintf(stderr, "wait_mpi at thread level %d did not fail\n", provided);
    } catch (const std::runtime_error& e) {
      std::printf("%s: %s\n", provided == MPI_THREAD_SINGLE ? "ok" : "unexpected level", e.what());
      rc = 0;
    }
  }
  MPI_Finalize();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--before-init") return before_init();
  if (argc == 2 && std::string(argv[1]) == "--single") return single_thread_level();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "async_mpi_test: this MPI offers thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    MPI_Finalize();
    return 1;
  }
  // Only rank 0 prints: two gtest reports would interleave.
  if (rank() != 0)
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  else heddle_test::install_reproduce_listener(argv[0], "mpirun -np " + std::to_string(ranks()));
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
