// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_for over ranges (blocked_range, 2d, 3d, a user's range) with every partitioner,
// its index and step forms' new options, and parallel_for_each over random-access and forward
// iterators: exact coverage, errors, cancellation, explicit runtimes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <forward_list>
#include <list>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <heddle/heddle.hpp>

#include "algorithm_test_support.hpp"
#include "test_support.hpp"

namespace {

using algo_test::coverage;

template <class P>
void expect_cover(heddle::runtime& rt, std::size_t n, std::size_t grain, P part) {
  coverage c(n);
  std::atomic<std::size_t> pieces{0};
  heddle::parallel_for(
      rt, heddle::blocked_range<std::size_t>(0, n, grain),
      [&](const heddle::blocked_range<std::size_t>& r) {
        EXPECT_FALSE(r.empty());
        pieces++;
        for (std::size_t i = r.begin(); i != r.end(); ++i) c.hit(i);
      },
      part);
  EXPECT_EQ(c.first_bad(), n) << "n=" << n << " grain=" << grain;
  if (n > 0) {
    EXPECT_GE(pieces.load(), 1u);
  }
}

TEST(ParallelForRange, EveryIndexOnceWithEveryPartitionerAndWorkerCount) {
  const std::size_t n = heddle_test::scaled<std::size_t>(200'003, 50'003);
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    for (std::size_t grain : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, n, n + 10}) {
      expect_cover(rt, n, grain, heddle::auto_partitioner{});
      expect_cover(rt, n, grain, heddle::simple_partitioner{});
      expect_cover(rt, n, grain, heddle::static_partitioner{});
    }
    for (std::size_t small = 0; small < 40; ++small) expect_cover(rt, small, 1, heddle::auto_partitioner{});
  }
}

TEST(ParallelForRange, SimplePartitionerSplitsDownToTheGrain) {
  heddle::runtime rt(2);
  std::atomic<std::size_t> pieces{0}, biggest{0};
  heddle::parallel_for(
      rt, heddle::blocked_range<int>(0, 1000, 10),
      [&](const heddle::blocked_range<int>& r) {
        pieces++;
        std::size_t b = biggest.load();
        while (r.size() > b && !biggest.compare_exchange_weak(b, r.size())) {
        }
      },
      heddle::simple_partitioner{});
  EXPECT_LE(biggest.load(), 10u);
  EXPECT_GE(pieces.load(), 100u);
}

TEST(ParallelForRange, StaticPartitionerMakesOnePiecePerWorker) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    std::atomic<unsigned> pieces{0};
    const heddle::static_partitioner part;
    heddle::parallel_for(
        rt, heddle::blocked_range<int>(0, 100000), [&](const heddle::blocked_range<int>&) { pieces++; }, part);
    EXPECT_EQ(pieces.load(), w);
  }
}

TEST(ParallelForRange, AutoPartitionerMakesFewPiecesWhenNothingIsStolen) {
  // One worker: no piece is ever stolen, so no piece splits beyond the initial 4 per worker, and
  // each of those leaves is run in its range pool's 2^leaf_depth parts: 64, as many as
  // tbb::parallel_for makes of the same range in a one-thread arena.
  heddle::runtime rt(1);
  std::atomic<unsigned> pieces{0};
  heddle::parallel_for(rt, heddle::blocked_range<int>(0, 1 << 20),
                       [&](const heddle::blocked_range<int>&) { pieces++; });
  EXPECT_EQ(pieces.load(), 4u << heddle::core_detail::auto_piece::leaf_depth);
  EXPECT_EQ(pieces.load(), 64u);
}

TEST(ParallelForRange, AutoPartitionerKeepsAStencilsRowsWholeAsOneTbbDoes) {
  // The for2d benchmark's range (4094 x 4094, grains 4 x 256) at one worker: 64 pieces of 64 (the
  // last 63) full rows, the shapes tbb::parallel_for gives. A leaf pool one level deeper made 128,
  // and at 2 workers cut each row in two: pieces of 32 x 2047, where oneTBB's are 32 x 4094
  // (docs/algorithms.md, "Partitioners").
  heddle::runtime rt(1);
  std::mutex m;
  std::multiset<std::pair<int, int>> shapes;
  heddle::parallel_for(rt, heddle::blocked_range2d<int>(1, 4095, 4, 1, 4095, 256),
                       [&](const heddle::blocked_range2d<int>& r) {
                         const std::lock_guard lock(m);
                         shapes.emplace(int(r.rows().size()), int(r.cols().size()));
                       });
  EXPECT_EQ(shapes.size(), 64u);
  EXPECT_EQ(shapes.count({64, 4094}), 62u);
  EXPECT_EQ(shapes.count({63, 4094}), 2u);
}

TEST(ParallelForRange, AutoPartitionerLetsAnIdleWorkerTakeEverythingButABlockedLeaf) {
  // 2 workers start with 8 pieces: the worker that runs the root keeps [0, n/8) as its leaf and
  // spawns the rest. Its first body call blocks until everything outside that leaf is done, which
  // the other worker can only do by stealing every spawned piece (the leaf's own waiting parts stay
  // behind the blocked call, unless they were offered while the deque was empty). The wait must end
  // by itself; the 30 s limit only keeps a broken partitioner from hanging the suite.
  heddle::runtime rt(2);
  const std::size_t n = 1 << 16;
  std::atomic<std::size_t> done{0};
  std::atomic<bool> gave_up{false};
  coverage c(n);
  heddle::parallel_for(rt, heddle::blocked_range<std::size_t>(0, n), [&](const heddle::blocked_range<std::size_t>& r) {
    if (r.begin() == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (done.load() < n - n / 8) {
        if (std::chrono::steady_clock::now() >= give_up) {
          gave_up = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    for (auto i = r.begin(); i != r.end(); ++i) c.hit(i);
    done += r.size();
  });
  EXPECT_FALSE(gave_up.load()) << "the other worker did not finish the pieces outside the blocked leaf";
  EXPECT_EQ(c.first_bad(), n);
}

TEST(ParallelForRange, AutoPartitionerSplitsAStolenPieceThatWouldRunWhole) {
  // The rule itself (heddle/algorithm/detail/partition.hpp): a piece started on another worker than
  // the one that spawned it was stolen; if it was to run whole (one piece), it is split in two, and
  // its leaf pool regains the level a split took. Started where it was spawned, it runs whole.
  using heddle::core_detail::auto_piece;
  heddle::runtime rt(2);
  rt.task([] {
      const unsigned here = heddle::core_detail::current_worker->index;
      const heddle::blocked_range<std::size_t> r(0, 1000);
      auto_piece stolen{1, here + 1, auto_piece::leaf_depth - 1};
      EXPECT_FALSE(stolen.wants_split(r));
      stolen.start();
      EXPECT_EQ(stolen.pieces, auto_piece::pieces_when_stolen);
      EXPECT_TRUE(stolen.wants_split(r));
      EXPECT_EQ(stolen.depth, auto_piece::leaf_depth);
      EXPECT_EQ(stolen.origin, here);
      auto_piece own{1, here, auto_piece::leaf_depth - 1};
      own.start();
      EXPECT_EQ(own.pieces, 1u);
      EXPECT_FALSE(own.wants_split(r));
      EXPECT_EQ(own.depth, auto_piece::leaf_depth - 1);
    }).get();
}

TEST(ParallelForRange, ExplicitRuntimeFromATaskOfAnother) {
  heddle::runtime a(1), b(2);
  coverage c(20000);
  a.task([&] {
     heddle::parallel_for(b, heddle::blocked_range<std::size_t>(0, 20000),
                          [&](const heddle::blocked_range<std::size_t>& r) {
                            for (auto i = r.begin(); i != r.end(); ++i) c.hit(i);
                          });
   }).get();
  EXPECT_EQ(c.first_bad(), 20000u);
}

TEST(ParallelForRange, TwoAndThreeDimensions) {
  heddle::runtime rt(4);
  constexpr int rows = 123, cols = 77, pages = 9;
  {
    coverage c(rows * cols);
    heddle::parallel_for(rt, heddle::blocked_range2d<int>(0, rows, 4, 0, cols, 8),
                         [&](const heddle::blocked_range2d<int>& r) {
                           for (int i = r.rows().begin(); i != r.rows().end(); ++i)
                             for (int j = r.cols().begin(); j != r.cols().end(); ++j)
                               c.hit(static_cast<std::size_t>(i * cols + j));
                         });
    EXPECT_EQ(c.first_bad(), std::size_t{rows * cols});
  }
  {
    coverage c(pages * rows * cols);
    heddle::parallel_for(
        rt, heddle::blocked_range3d<int>(0, pages, 0, rows, 0, cols),
        [&](const heddle::blocked_range3d<int>& r) {
          for (int p = r.pages().begin(); p != r.pages().end(); ++p)
            for (int i = r.rows().begin(); i != r.rows().end(); ++i)
              for (int j = r.cols().begin(); j != r.cols().end(); ++j)
                c.hit(static_cast<std::size_t>((p * rows + i) * cols + j));
        },
        heddle::simple_partitioner{});
    EXPECT_EQ(c.first_bad(), std::size_t{pages * rows * cols});
  }
}

TEST(ParallelForRange, UsersOwnRange) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    coverage c(10007);
    heddle::parallel_for(rt, algo_test::thirds_range(0, 10007), [&](const algo_test::thirds_range& r) {
      for (std::size_t i = r.lo(); i < r.hi(); ++i) c.hit(i);
    });
    EXPECT_EQ(c.first_bad(), 10007u);
    coverage d(500);
    heddle::parallel_for(
        rt, algo_test::thirds_range(0, 500),
        [&](const algo_test::thirds_range& r) {
          for (std::size_t i = r.lo(); i < r.hi(); ++i) d.hit(i);
        },
        heddle::simple_partitioner{});
    EXPECT_EQ(d.first_bad(), 500u);
  }
}

TEST(ParallelForRange, EmptyRangeCallsNothing) {
  std::atomic<int> calls{0};
  heddle::parallel_for(heddle::blocked_range<int>(4, 4), [&](const heddle::blocked_range<int>&) { calls++; });
  heddle::parallel_for(heddle::blocked_range2d<int>(0, 5, 3, 3), [&](const heddle::blocked_range2d<int>&) { calls++; });
  EXPECT_EQ(calls.load(), 0);
}

TEST(ParallelForRange, FirstExceptionRethrownAndTheRestStopped) {
  heddle::runtime rt(2);
  std::atomic<int> calls{0};
  EXPECT_THROW(heddle::parallel_for(
                   rt, heddle::blocked_range<int>(0, 1'000'000),
                   [&](const heddle::blocked_range<int>& r) {
                     calls++;
                     if (r.begin() <= 0 && 0 < r.end()) throw std::domain_error("piece 0");
                     std::this_thread::sleep_for(std::chrono::microseconds(50));
                   },
                   heddle::simple_partitioner{}),
               std::domain_error);
  EXPECT_LT(calls.load(), 1000);  // of a million pieces
}

TEST(ParallelForRange, CancelledTokenBeforeAndDuring) {
  heddle::runtime rt(2);
  heddle::cancellation_source src;
  src.cancel();
  std::atomic<int> calls{0};
  EXPECT_THROW(heddle::parallel_for(
                   rt, heddle::blocked_range<int>(0, 1000), [&](const heddle::blocked_range<int>&) { calls++; },
                   src.token()),
               heddle::task_cancelled);
  EXPECT_THROW(heddle::parallel_for(
                   rt, 0, 1000, [&](int) { calls++; }, src.token()),
               heddle::task_cancelled);
  EXPECT_EQ(calls.load(), 0);

  heddle::cancellation_source during;
  EXPECT_THROW(heddle::parallel_for(
                   rt, heddle::blocked_range<int>(0, 1'000'000),
                   [&](const heddle::blocked_range<int>& r) {
                     if (calls++ == 10) during.cancel();
                     (void)r;
                   },
                   heddle::simple_partitioner{}, during.token()),
               heddle::task_cancelled);
  EXPECT_LT(calls.load(), 100000);
  // A token that is never cancelled changes nothing.
  heddle::cancellation_source quiet;
  coverage c(1000);
  heddle::parallel_for(
      rt, heddle::blocked_range<std::size_t>(0, 1000),
      [&](const heddle::blocked_range<std::size_t>& r) {
        for (auto i = r.begin(); i != r.end(); ++i) c.hit(i);
      },
      quiet.token(), heddle::auto_partitioner{});
  EXPECT_EQ(c.first_bad(), 1000u);
}

TEST(ParallelForRange, FromInsideATaskAndFromOutside) {
  heddle::runtime rt(2);
  const auto main_id = std::this_thread::get_id();
  std::atomic<int> on_main{0};
  coverage a(50000), b(50000);
  auto body = [&](coverage& c) {
    return [&](const heddle::blocked_range<std::size_t>& r) {
      if (std::this_thread::get_id() == main_id) on_main++;
      for (auto i = r.begin(); i != r.end(); ++i) c.hit(i);
    };
  };
  heddle::parallel_for(rt, heddle::blocked_range<std::size_t>(0, 50000), body(a));
  rt.task([&] { heddle::parallel_for(heddle::blocked_range<std::size_t>(0, 50000), body(b)); }).get();
  EXPECT_EQ(a.first_bad(), 50000u);
  EXPECT_EQ(b.first_bad(), 50000u);
  EXPECT_EQ(on_main.load(), 0);
}

TEST(ParallelForIndex, TokenPartitionerAndRuntimeForms) {
  heddle::runtime rt(4);
  coverage a(10000), b(10000), c(10000);
  heddle::parallel_for(rt, 0, 10000, [&](int i) { a.hit(static_cast<std::size_t>(i)); });
  heddle::parallel_for(
      rt, 0, 10000, [&](int i) { b.hit(static_cast<std::size_t>(i)); }, 100, heddle::static_partitioner{});
  heddle::cancellation_source src;
  heddle::parallel_for(
      0, 10000, [&](int i) { c.hit(static_cast<std::size_t>(i)); }, src.token());
  EXPECT_EQ(a.first_bad(), 10000u);
  EXPECT_EQ(b.first_bad(), 10000u);
  EXPECT_EQ(c.first_bad(), 10000u);
}

TEST(ParallelForStep, EveryStepOnce) {
  heddle::runtime rt(2);
  for (int step : {1, 2, 3, 7, 1000, 5000}) {
    // [-3, 997) by step: index k = (i + 3) / step is hit once for each k < ceil(1000 / step).
    const std::size_t count = static_cast<std::size_t>((1000 + step - 1) / step);
    coverage c(count);
    heddle::parallel_for(rt, -3, 997, step, [&](int i) {
      EXPECT_EQ((i + 3) % step, 0);
      c.hit(static_cast<std::size_t>((i + 3) / step));
    });
    EXPECT_EQ(c.first_bad(), count) << "step " << step;
  }
  {
    // The last step lands exactly on the top of the type: no overflow past it.
    coverage c(3);
    heddle::parallel_for(std::uint8_t{245}, std::uint8_t{255}, 4, [&](std::uint8_t i) { c.hit((i - 245u) / 4u); });
    EXPECT_EQ(c.first_bad(), 3u);
  }
  std::atomic<int> calls{0};
  heddle::parallel_for(10, 10, 3, [&](int) { calls++; });
  heddle::parallel_for(10, 5, 3, [&](int) { calls++; });
  EXPECT_EQ(calls.load(), 0);
  EXPECT_THROW(heddle::parallel_for(0, 10, 0, [](int) {}), std::invalid_argument);
  EXPECT_THROW(heddle::parallel_for(0, 10, -1, [](int) {}), std::invalid_argument);
}

TEST(ParallelForEach, RandomAccessAndForwardIterators) {
  for (unsigned w : algo_test::worker_counts) {
    heddle::runtime rt(w);
    std::vector<int> v(30011);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
    heddle::parallel_for_each(rt, v.begin(), v.end(), [](int& x) { x = 2 * x + 1; });
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(2 * i + 1));

    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{10007}}) {
      std::list<int> l;
      for (std::size_t i = 0; i < n; ++i) l.push_back(static_cast<int>(i));
      coverage c(n);
      heddle::parallel_for_each(rt, l.begin(), l.end(), [&](int& x) {
        c.hit(static_cast<std::size_t>(x));
        x = -x;
      });
      EXPECT_EQ(c.first_bad(), n);
      int k = 0;
      for (int x : l) EXPECT_EQ(x, -(k++));
    }
    std::vector<int> none;
    heddle::parallel_for_each(rt, none.begin(), none.end(), [](int&) { ADD_FAILURE() << "called on an empty vector"; });
    std::vector<int> one{41};
    heddle::parallel_for_each(rt, one, [](int& x) { ++x; });
    EXPECT_EQ(one[0], 42);
    std::forward_list<int> fl(5000, 3);
    std::atomic<long> sum{0};
    heddle::parallel_for_each(rt, fl, [&](int x) { sum += x; });
    EXPECT_EQ(sum.load(), 15000);
    std::set<int> s{1, 2, 3, 4, 5};
    std::atomic<int> total{0};
    heddle::parallel_for_each(rt, s.begin(), s.end(), [&](int x) { total += x; });
    EXPECT_EQ(total.load(), 15);
  }
}

TEST(ParallelForEach, ExceptionStopsTheWalkAndCancellation) {
  heddle::runtime rt(2);
  std::list<int> l(100000, 1);
  std::atomic<int> calls{0};
  EXPECT_THROW(heddle::parallel_for_each(rt, l.begin(), l.end(),
                                         [&](int) {
                                           if (calls++ == 5) throw std::runtime_error("five");
                                         }),
               std::runtime_error);
  EXPECT_LT(calls.load(), 100000);
  heddle::cancellation_source src;
  src.cancel();
  EXPECT_THROW(heddle::parallel_for_each(
                   l.begin(), l.end(), [](int) {}, src.token()),
               heddle::task_cancelled);
  std::vector<int> v(100000);
  calls = 0;
  EXPECT_THROW(heddle::parallel_for_each(v,
                                         [&](int) {
                                           if (calls++ == 5) throw std::runtime_error("five");
                                         }),
               std::runtime_error);
}

TEST(ParallelForRange, StressNestedAndConcurrentCalls) {
  heddle_test::watchdog dog("ParallelForRange.StressNestedAndConcurrentCalls", std::chrono::seconds(120));
  heddle::runtime rt(4);
  const int rounds = heddle_test::scaled(40, 8);
  for (int round = 0; round < rounds; ++round) {
    constexpr std::size_t rows = 64, cols = 500;
    coverage c(rows * cols);
    // Outer pieces over rows, each an inner parallel_for over columns, from two callers at once.
    auto run_half = [&](std::size_t lo, std::size_t hi) {
      heddle::parallel_for(rt, heddle::blocked_range<std::size_t>(lo, hi),
                           [&](const heddle::blocked_range<std::size_t>& r) {
                             for (std::size_t i = r.begin(); i != r.end(); ++i)
                               heddle::parallel_for(heddle::blocked_range<std::size_t>(0, cols, 16),
                                                    [&](const heddle::blocked_range<std::size_t>& q) {
                                                      for (std::size_t j = q.begin(); j != q.end(); ++j)
                                                        c.hit(i * cols + j);
                                                    });
                           });
    };
    std::thread other([&] { run_half(rows / 2, rows); });
    run_half(0, rows / 2);
    other.join();
    ASSERT_EQ(c.first_bad(), rows * cols) << "round " << round;
  }
}

}  // namespace
