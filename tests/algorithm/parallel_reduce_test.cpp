// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_reduce and parallel_deterministic_reduce: sums against serial ones, join order,
// value types without a default constructor or with costly copies, empty and tiny ranges, errors,
// cancellation, explicit runtimes, bitwise reproducibility, and a stress run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"
#include "test_support.hpp"

namespace {

using range_t = heddle::blocked_range<std::size_t>;

std::uint64_t serial_sum(std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += heddle_test::mix(i) & 0xffff;
  return s;
}

template <class... P>
std::uint64_t reduce_sum(heddle::runtime& rt, std::size_t n, std::size_t grain, const P&... options) {
  return heddle::parallel_reduce(
      rt, range_t(0, n, grain), std::uint64_t{0},
      [](const range_t& r, std::uint64_t acc) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) acc += heddle_test::mix(i) & 0xffff;
        return acc;
      },
      [](std::uint64_t a, std::uint64_t b) { return a + b; }, options...);
}

TEST(ParallelReduce, SumMatchesSerialForEveryPartitionerGrainAndWorkerCount) {
  const std::size_t n = heddle_test::scaled<std::size_t>(300'007, 60'007);
  const std::uint64_t expect = serial_sum(n);
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t grain : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, n, n * 2}) {
      EXPECT_EQ(reduce_sum(rt, n, grain), expect) << w << " workers, grain " << grain;
      EXPECT_EQ(reduce_sum(rt, n, grain, heddle::simple_partitioner{}), expect);
      EXPECT_EQ(reduce_sum(rt, n, grain, heddle::static_partitioner{}), expect);
    }
    for (std::size_t small = 0; small < 20; ++small) EXPECT_EQ(reduce_sum(rt, small, 1), serial_sum(small));
  }
}

// Concatenation is associative, not commutative: any join out of order shows.
std::string concat_digits(heddle::runtime& rt, std::size_t n, bool deterministic) {
  auto body = [](const range_t& r, std::string acc) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) acc += static_cast<char>('0' + i % 10);
    return acc;
  };
  auto join = [](std::string a, const std::string& b) { return a + b; };
  if (deterministic) return heddle::parallel_deterministic_reduce(rt, range_t(0, n), std::string(), body, join);
  return heddle::parallel_reduce(rt, range_t(0, n), std::string(), body, join, heddle::simple_partitioner{});
}

TEST(ParallelReduce, JoinsInRangeOrder) {
  const std::size_t n = 20000;
  std::string expect;
  for (std::size_t i = 0; i < n; ++i) expect += static_cast<char>('0' + i % 10);
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    EXPECT_EQ(concat_digits(rt, n, false), expect);
    EXPECT_EQ(concat_digits(rt, n, true), expect);
  }
}

// No default constructor, no assignment; counts its copies.
struct tally {
  explicit tally(long v) : value(v) {}
  tally(const tally& o) : value(o.value) { copies.fetch_add(1, std::memory_order_relaxed); }
  tally(tally&&) noexcept = default;
  tally& operator=(const tally&) = delete;
  tally& operator=(tally&&) = delete;
  long value;
  static inline std::atomic<long> copies{0};
};

TEST(ParallelReduce, NoDefaultConstructorNoAssignmentCopiesOnlyTheIdentity) {
  heddle::runtime rt(4);
  const tally zero(0);
  std::atomic<long> pieces{0};
  tally::copies = 0;
  const tally t = heddle::parallel_reduce(
      rt, range_t(0, 100000, 10), zero,
      [&](const range_t& r, tally acc) {
        pieces++;
        long v = acc.value;
        for (std::size_t i = r.begin(); i != r.end(); ++i) v += static_cast<long>(i);
        return tally(v);
      },
      [](tally a, tally b) { return tally(a.value + b.value); }, heddle::simple_partitioner{});
  EXPECT_EQ(t.value, 100000L * 99999 / 2);
  // The identity is copied at most once per piece, the values themselves never.
  EXPECT_LE(tally::copies.load(), pieces.load() + 1);
  tally::copies = 0;
  const tally d = heddle::parallel_deterministic_reduce(
      rt, range_t(0, 1000, 1), zero,
      [](const range_t& r, const tally& acc) { return tally(acc.value + static_cast<long>(r.size())); },
      [](const tally& a, const tally& b) { return tally(a.value + b.value); });
  EXPECT_EQ(d.value, 1000);
  EXPECT_EQ(tally::copies.load(), 1000);  // one identity copy per leaf, grain 1: 1000 leaves
}

TEST(ParallelReduce, EmptyRangeGivesTheIdentityAndOneElement) {
  heddle::runtime rt(2);
  int calls = 0;
  EXPECT_EQ(heddle::parallel_reduce(
                rt, range_t(5, 5), 42,
                [&](const range_t&, int a) {
                  calls++;
                  return a;
                },
                [](int a, int b) { return a + b; }),
            42);
  EXPECT_EQ(heddle::parallel_deterministic_reduce(
                range_t(5, 5), 7, [&](const range_t&, int a) { return ++calls, a; },
                [](int a, int b) { return a + b; }),
            7);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(heddle::parallel_reduce(
                rt, range_t(5, 6), 1, [](const range_t& r, int a) { return a + static_cast<int>(r.begin()); },
                [](int a, int b) { return a + b; }),
            6);
}

TEST(ParallelReduce, UsersOwnRange) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    auto body = [](const algo_test::thirds_range& r, std::uint64_t acc) {
      for (std::size_t i = r.lo(); i < r.hi(); ++i) acc += i * i;
      return acc;
    };
    auto join = [](std::uint64_t a, std::uint64_t b) { return a + b; };
    std::uint64_t expect = 0;
    for (std::uint64_t i = 0; i < 54321; ++i) expect += i * i;
    EXPECT_EQ(heddle::parallel_reduce(rt, algo_test::thirds_range(0, 54321), std::uint64_t{0}, body, join), expect);
    EXPECT_EQ(heddle::parallel_deterministic_reduce(rt, algo_test::thirds_range(0, 54321), std::uint64_t{0}, body,
                                                    join),
              expect);
  }
}

double det_sum(heddle::runtime& rt, const std::vector<double>& v, std::size_t grain, bool use_static = false) {
  auto body = [&v](const range_t& r, double acc) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) acc += v[i];
    return acc;
  };
  auto join = [](double a, double b) { return a + b; };
  if (use_static)
    return heddle::parallel_deterministic_reduce(rt, range_t(0, v.size(), grain), 0.0, body, join,
                                                 heddle::static_partitioner{});
  return heddle::parallel_deterministic_reduce(rt, range_t(0, v.size(), grain), 0.0, body, join);
}

TEST(ParallelDeterministicReduce, BitwiseIdenticalForEveryWorkerCountAndRun) {
  // Magnitudes from 1e-8 to 1e8 of both signs: any change of grouping changes the last bits.
  const std::size_t n = heddle_test::scaled<std::size_t>(200'000, 40'000);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto m = heddle_test::mix(i);
    v[i] = std::ldexp(static_cast<double>(m % 1000) - 500.0, static_cast<int>(m % 54) - 27);
  }
  for (std::size_t grain : {std::size_t{1}, std::size_t{100}, std::size_t{5000}}) {
    heddle::runtime one(1);
    const double reference = det_sum(one, v, grain);
    for (unsigned w : algo_test::worker_counts) {
      heddle::runtime rt(w);
      for (int run = 0; run < 20; ++run) {
        const double got = det_sum(rt, v, grain);
        EXPECT_EQ(std::memcmp(&got, &reference, sizeof got), 0)
            << w << " workers, grain " << grain << ": " << got << " vs " << reference;
      }
      // static_partitioner: the same for every run with the same worker count.
      const double s0 = det_sum(rt, v, grain, true);
      for (int run = 0; run < 5; ++run) {
        const double s = det_sum(rt, v, grain, true);
        EXPECT_EQ(std::memcmp(&s, &s0, sizeof s), 0);
      }
    }
  }
}

TEST(ParallelReduce, FirstExceptionRethrownAndTheRestStopped) {
  for (bool deterministic : {false, true}) {
    heddle::runtime rt(2);
    std::atomic<int> calls{0};
    auto body = [&](const range_t& r, long acc) {
      calls++;
      if (r.begin() == 0) throw std::out_of_range("first piece");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      return acc + static_cast<long>(r.size());
    };
    auto join = [](long a, long b) { return a + b; };
    try {
      if (deterministic) (void)heddle::parallel_deterministic_reduce(rt, range_t(0, 1'000'000), 0L, body, join);
      else (void)heddle::parallel_reduce(rt, range_t(0, 1'000'000), 0L, body, join, heddle::simple_partitioner{});
      ADD_FAILURE() << "no exception";
    } catch (const std::out_of_range& e) {
      EXPECT_STREQ(e.what(), "first piece");
    }
    EXPECT_LT(calls.load(), 1000);  // of a million leaves
  }
  // A join that throws (the deterministic form joins at every split; parallel_reduce joins only
  // where a piece was stolen, which may not happen at all).
  heddle::runtime rt(2);
  EXPECT_THROW((void)heddle::parallel_deterministic_reduce(
                   rt, range_t(0, 1000), 0, [](const range_t&, int a) { return a + 1; },
                   [](int, int) -> int { throw std::logic_error("join"); }),
               std::logic_error);
  // The runtime is fine afterwards.
  EXPECT_EQ(reduce_sum(rt, 1000, 1), serial_sum(1000));
}

TEST(ParallelReduce, CancellationBeforeAndDuring) {
  heddle::runtime rt(2);
  heddle::cancellation_source before;
  before.cancel();
  std::atomic<int> calls{0};
  auto body = [&](const range_t& r, long acc) {
    calls++;
    return acc + static_cast<long>(r.size());
  };
  auto join = [](long a, long b) { return a + b; };
  EXPECT_THROW((void)heddle::parallel_reduce(rt, range_t(0, 1000), 0L, body, join, before.token()),
               heddle::task_cancelled);
  EXPECT_THROW((void)heddle::parallel_deterministic_reduce(range_t(0, 1000), 0L, body, join, before.token()),
               heddle::task_cancelled);
  EXPECT_EQ(calls.load(), 0);
  heddle::cancellation_source during;
  auto cancelling = [&](const range_t& r, long acc) {
    if (calls++ == 10) during.cancel();
    return acc + static_cast<long>(r.size());
  };
  EXPECT_THROW((void)heddle::parallel_reduce(rt, range_t(0, 1'000'000), 0L, cancelling, join,
                                             heddle::simple_partitioner{}, during.token()),
               heddle::task_cancelled);
  EXPECT_LT(calls.load(), 100000);
  heddle::cancellation_source quiet;
  EXPECT_EQ(heddle::parallel_reduce(rt, range_t(0, 1000), 0L, body, join, quiet.token()), 1000);
}

TEST(ParallelReduce, FromInsideTasksAndFromOutside) {
  heddle::runtime rt(2);
  const std::uint64_t expect = serial_sum(100000);
  auto f = rt.task([&] { return reduce_sum(rt, 100000, 1); });
  EXPECT_EQ(*f, expect);
  // Default runtime, called from this (foreign) thread.
  EXPECT_EQ(heddle::parallel_reduce(
                range_t(0, 100000), std::uint64_t{0},
                [](const range_t& r, std::uint64_t acc) {
                  for (std::size_t i = r.begin(); i != r.end(); ++i) acc += heddle_test::mix(i) & 0xffff;
                  return acc;
                },
                std::plus<>{}),
            expect);
}

TEST(ParallelReduce, StressNestedReductionsFromManyCallers) {
  heddle_test::watchdog dog("ParallelReduce.StressNestedReductionsFromManyCallers", std::chrono::seconds(120));
  heddle::runtime rt(4);
  const int rounds = heddle_test::scaled(30, 6);
  static constexpr std::size_t outer = 200, inner = 1000;
  std::uint64_t expect = 0;
  for (std::size_t i = 0; i < outer; ++i)
    for (std::size_t j = 0; j < inner; ++j) expect += (i * inner + j) % 7;
  auto run = [&] {
    // Each outer piece runs an inner reduction: forks nest, and waits help across both levels.
    return heddle::parallel_reduce(
        rt, range_t(0, outer), std::uint64_t{0},
        [&](const range_t& r, std::uint64_t acc) {
          for (std::size_t i = r.begin(); i != r.end(); ++i)
            acc += heddle::parallel_reduce(
                range_t(0, inner, 8), std::uint64_t{0},
                [i](const range_t& q, std::uint64_t a) {
                  for (std::size_t j = q.begin(); j != q.end(); ++j) a += (i * inner + j) % 7;
                  return a;
                },
                std::plus<>{});
          return acc;
        },
        std::plus<>{});
  };
  for (int round = 0; round < rounds; ++round) {
    std::uint64_t a = 0, b = 0;
    std::thread other([&] { b = run(); });
    a = run();
    other.join();
    ASSERT_EQ(a, expect) << "round " << round;
    ASSERT_EQ(b, expect) << "round " << round;
  }
}

}  // namespace
