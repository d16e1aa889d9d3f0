// SPDX-License-Identifier: Apache-2.0
// heddle::parallel_pipeline: order and exclusion guarantees under stress, the token limit,
// flow_control, exceptions from every filter and from futures, cancellation, filters returning
// futures (timers, promises completed by another thread) that must not hold a worker, 1/2/4 workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <heddle/heddle.hpp>

#include "test_support.hpp"

namespace {

using heddle::filter_mode;
using heddle::flow_control;
using heddle::make_filter;
using namespace std::chrono_literals;

// A little work of random length: items overtake each other in parallel filters.
void jitter(std::uint64_t seed) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL;
  const unsigned spins = unsigned(x >> 58) * 20;  // 0..1260
  for (unsigned i = 0; i < spins; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    asm volatile("" : "+r"(x));
  }
  if ((seed % 97) == 0) std::this_thread::yield();
}

// Counts how many callers are inside at once and remembers the most.
class occupancy {
 public:
  void enter() {
    const int now = inside_.fetch_add(1, std::memory_order_acq_rel) + 1;
    int m = most_.load(std::memory_order_relaxed);
    while (now > m && !most_.compare_exchange_weak(m, now, std::memory_order_relaxed)) {
    }
  }
  void leave() { inside_.fetch_sub(1, std::memory_order_acq_rel); }
  int most() const { return most_.load(); }

 private:
  std::atomic<int> inside_{0}, most_{0};
};

struct stress_result {
  std::vector<long> order;  // what the serial_in_order output filter saw
  int most_middle = 0, most_output = 0, most_in_flight = 0;
  long out_of_order_items = 0;
};

stress_result run_stress(heddle::runtime& rt, long n, std::size_t tokens, filter_mode middle_serial) {
  stress_result r;
  occupancy middle, output, in_flight;
  std::atomic<long> ooo{0};
  long next = 0;
  r.order.reserve(std::size_t(n));
  heddle::parallel_pipeline(
      rt, tokens, make_filter<void, long>(filter_mode::serial_in_order, [&](flow_control& fc) -> long {
                    if (next == n) {
                      fc.stop();
                      return -1;
                    }
                    in_flight.enter();
                    return next++;
                  }) & make_filter<long, long>(filter_mode::parallel, [](long v) {
                    jitter(std::uint64_t(v));
                    return v;
                  }) & make_filter<long, std::unique_ptr<long>>(middle_serial, [&](long v) {
                    middle.enter();
                    jitter(std::uint64_t(v) * 3);
                    middle.leave();
                    ooo.fetch_add(1, std::memory_order_relaxed);
                    return std::make_unique<long>(v);
                  }) & make_filter<std::unique_ptr<long>, long>(filter_mode::parallel, [](std::unique_ptr<long> p) {
                    jitter(std::uint64_t(*p) * 7);
                    return *p;
                  }) & make_filter<long, void>(filter_mode::serial_in_order, [&](long v) {
                    output.enter();
                    r.order.push_back(v);
                    output.leave();
                    in_flight.leave();
                  }));
  r.most_middle = middle.most();
  r.most_output = output.most();
  r.most_in_flight = in_flight.most();
  r.out_of_order_items = ooo.load();
  return r;
}

TEST(ParallelPipeline, OrderExclusionAndTokenLimitUnderStress) {
  heddle_test::watchdog dog("pipeline stress", std::chrono::seconds(240));
  const long n = heddle_test::scaled<long>(20'000, 4'000);
  for (unsigned workers : {1u, 2u, 4u}) {
    heddle::runtime rt(workers);
    for (std::size_t tokens : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{64}})
      for (filter_mode m : {filter_mode::serial_in_order, filter_mode::serial_out_of_order}) {
        const auto r = run_stress(rt, n, tokens, m);
        ASSERT_EQ(r.order.size(), std::size_t(n)) << workers << " workers, " << tokens << " tokens";
        for (long i = 0; i < n; ++i) ASSERT_EQ(r.order[std::size_t(i)], i) << "output out of input order";
        EXPECT_EQ(r.out_of_order_items, n);
        EXPECT_EQ(r.most_middle, 1) << "a serial filter ran two items at once";
        EXPECT_EQ(r.most_output, 1) << "a serial filter ran two items at once";
        EXPECT_LE(r.most_in_flight, int(tokens)) << "more items in flight than tokens";
      }
  }
}

// Each serial filter on its own: never two calls of its body at once, while a parallel filter does
// overlap (with several workers, given time).
TEST(ParallelPipeline, SerialFilterNeverRunsConcurrently) {
  const long n = heddle_test::scaled<long>(20'000, 4'000);
  for (unsigned workers : {2u, 4u})
    for (filter_mode m : {filter_mode::serial_in_order, filter_mode::serial_out_of_order}) {
      heddle::runtime rt(workers);
      occupancy serial;
      std::atomic<long> next{0}, sum{0};
      heddle::parallel_pipeline(rt, 16, make_filter<void, long>(filter_mode::parallel, [&](flow_control& fc) -> long {
                                          const long v = next++;
                                          if (v >= n) fc.stop();
                                          return v;
                                        }) & make_filter<long, long>(filter_mode::parallel, [](long v) {
                                          return jitter(std::uint64_t(v)), v;
                                        }) & make_filter<long, void>(m, [&](long v) {
                                          serial.enter();
                                          jitter(std::uint64_t(v) + 1);
                                          sum.fetch_add(v, std::memory_order_relaxed);
                                          serial.leave();
                                        }));
      EXPECT_EQ(serial.most(), 1);
      EXPECT_EQ(sum.load(), n * (n - 1) / 2);
    }
}

TEST(ParallelPipeline, FlowControlAndSmallPipelines) {
  heddle::runtime rt(2);
  // The input stops at once: no item, no other body called.
  std::atomic<int> calls{0};
  heddle::parallel_pipeline(rt, 4, make_filter<void, int>(filter_mode::serial_in_order, [](flow_control& fc) {
                                     fc.stop();
                                     return 0;
                                   }) & make_filter<int, void>(filter_mode::parallel, [&](int) { calls++; }));
  EXPECT_EQ(calls.load(), 0);
  // One filter alone (filter<void, void>).
  int produced = 0;
  heddle::parallel_pipeline(rt, 3, make_filter<void, void>(filter_mode::serial_out_of_order, [&](flow_control& fc) {
                              if (++produced == 10) fc.stop();
                            }));
  EXPECT_EQ(produced, 10);
  // Middle filters of void input and output, and a type without a default constructor.
  struct no_default {
    explicit no_default(int v) : v(v) {}
    int v;
  };
  int i = 0;
  std::vector<int> seen;
  std::atomic<int> middle{0};
  heddle::parallel_pipeline(4, make_filter<void, no_default>(filter_mode::serial_in_order, [&](flow_control& fc) {
                                 if (i == 100) fc.stop();
                                 return no_default(i++);
                               }) & make_filter<no_default, void>(filter_mode::parallel, [&](no_default) {
                                 middle++;
                               }) & make_filter<void, void>(filter_mode::serial_in_order, [&] {
                                 seen.push_back(int(seen.size()));
                               }));
  EXPECT_EQ(middle.load(), 100);
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_THROW(heddle::parallel_pipeline(0, make_filter<void, void>(filter_mode::parallel,
                                                                    [](flow_control& fc) { fc.stop(); })),
               std::invalid_argument);
}

// A value type that counts its live objects: nothing leaks when the pipeline stops early.
struct counted {
  static inline std::atomic<long> live{0};
  explicit counted(long v) : v(v) { live++; }
  counted(counted&& o) noexcept : v(o.v) { live++; }
  counted(const counted&) = delete;
  ~counted() { live--; }
  long v;
};

TEST(ParallelPipeline, FirstExceptionFromAnyFilterIsRethrownAndStopsTheInput) {
  heddle_test::watchdog dog("pipeline exceptions", std::chrono::seconds(120));
  constexpr long n = 100'000, bad = 300;
  for (unsigned workers : {1u, 2u, 4u})
    for (int where = 0; where < 4; ++where) {
      heddle::runtime rt(workers);
      std::atomic<long> inputs{0}, last{0};
      long next = 0;
      auto maybe_throw = [&](int stage, long v) {
        if (stage == where && v == bad) throw std::runtime_error("stage " + std::to_string(stage));
      };
      try {
        heddle::parallel_pipeline(rt, 8,
                                  make_filter<void, counted>(filter_mode::serial_in_order, [&](flow_control& fc) {
                                    if (next == n) fc.stop();
                                    inputs++;
                                    maybe_throw(0, next);
                                    return counted(next++);
                                  }) & make_filter<counted, counted>(filter_mode::parallel, [&](counted c) {
                                    maybe_throw(1, c.v);
                                    return c;
                                  }) & make_filter<counted, counted>(filter_mode::serial_out_of_order, [&](counted c) {
                                    maybe_throw(2, c.v);
                                    return c;
                                  }) & make_filter<counted, void>(filter_mode::serial_in_order, [&](counted c) {
                                    maybe_throw(3, c.v);
                                    last = c.v;
                                  }));
        FAIL() << "no exception from stage " << where;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "stage " + std::to_string(where));
      }
      EXPECT_LE(inputs.load(), bad + 1 + 8) << "the input went on after the exception";
      EXPECT_LT(last.load(), bad);
      EXPECT_EQ(counted::live.load(), 0) << "values leaked";
    }
}

TEST(ParallelPipeline, CancellationBeforeAndDuring) {
  heddle::runtime rt(2);
  heddle::cancellation_source before;
  before.cancel();
  std::atomic<int> calls{0};
  EXPECT_THROW(
      heddle::parallel_pipeline(rt, 4, make_filter<void, void>(filter_mode::parallel, [&](flow_control&) { calls++; }),
                                before.token()),
      heddle::task_cancelled);
  EXPECT_EQ(calls.load(), 0);

  heddle::cancellation_source during;
  std::atomic<long> inputs{0};
  EXPECT_THROW(heddle::parallel_pipeline(4,
                                         make_filter<void, counted>(filter_mode::serial_in_order,
                                                                    [&](flow_control&) { return counted(inputs++); }) &
                                             make_filter<counted, void>(filter_mode::serial_in_order,
                                                                        [&](counted c) {
                                                                          if (c.v == 1000) during.cancel();
                                                                        }),
                                         during.token()),
               heddle::task_cancelled);
  EXPECT_LE(inputs.load(), 1000 + 1 + 4);
  EXPECT_EQ(counted::live.load(), 0);
}

// Filters returning futures: timers of random lengths in a parallel filter and in a serial one; the
// output keeps input order and the values arrive.
TEST(ParallelPipeline, FutureReturningFiltersWithTimers) {
  heddle_test::watchdog dog("pipeline timers", std::chrono::seconds(120));
  const long n = heddle_test::scaled<long>(2'000, 500);
  for (unsigned workers : {1u, 2u, 4u}) {
    heddle::runtime rt(workers);
    long next = 0;
    std::vector<long> out;
    heddle::parallel_pipeline(
        rt, 32, make_filter<void, long>(filter_mode::serial_in_order, [&](flow_control& fc) -> long {
                  if (next == n) fc.stop();
                  return next++;
                }) & make_filter<long, long>(filter_mode::parallel, [&rt](long v) -> heddle::future<long> {
                  return heddle::sleep_for(rt, std::chrono::microseconds((v * 37) % 300)).then([v] { return v * 2; });
                }) & make_filter<long, long>(filter_mode::serial_out_of_order, [&rt](long v) -> heddle::future<long> {
                  if (v % 3) return rt.task([v] { return v; });  // ready or nearly
                  return heddle::sleep_for(rt, 50us).then([v] { return v; });
                }) & make_filter<long, void>(filter_mode::serial_in_order, [&](long v) { out.push_back(v); }));
    ASSERT_EQ(out.size(), std::size_t(n));
    for (long i = 0; i < n; ++i) ASSERT_EQ(out[std::size_t(i)], 2 * i);
  }
}

// One worker; item i's future is completed by another thread only after item i + 1's body has been
// called. A pipeline that held its only worker while item i waited could never call it: a hang
// (the watchdog). The failure of one future fails the call with its exception.
TEST(ParallelPipeline, PendingFuturesHoldNoWorker) {
  heddle_test::watchdog dog("pipeline promises", std::chrono::seconds(120));
  const long n = heddle_test::scaled<long>(3'000, 600);
  for (long failing : {-1L, n / 2}) {
    heddle::runtime rt(1);
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::unique_ptr<heddle::promise<long>>> promises(static_cast<std::size_t>(n));
    long called = 0;  // bodies called so far (under m)
    std::thread completer([&] {
      for (long i = 0; i < n; ++i) {
        std::unique_lock lock(m);
        // After the failure the input stops: the items in flight are completed as they come.
        cv.wait(lock, [&] { return called > i + 1 || called == n || (failing >= 0 && i > failing && called > i); });
        auto p = std::move(promises[std::size_t(i)]);
        lock.unlock();
        if (i == failing) p->set_exception(std::make_exception_ptr(std::runtime_error("promise")));
        else p->set_value(i * 10);
      }
    });
    long next = 0;
    std::vector<long> out;
    auto run = [&] {
      heddle::parallel_pipeline(rt, 4,
                                make_filter<void, long>(filter_mode::serial_in_order, [&](flow_control& fc) -> long {
                                  if (next == n) fc.stop();
                                  return next++;
                                }) & make_filter<long, long>(filter_mode::serial_in_order, [&](long v) {
                                  auto p = std::make_unique<heddle::promise<long>>(rt);
                                  heddle::future<long> f = p->get_future();
                                  {
                                    std::lock_guard lock(m);
                                    promises[std::size_t(v)] = std::move(p);
                                    ++called;
                                  }
                                  cv.notify_all();
                                  return f;
                                }) & make_filter<long, void>(filter_mode::serial_in_order, [&](long v) {
                                  out.push_back(v);
                                }));
    };
    if (failing < 0) {
      run();
      ASSERT_EQ(out.size(), std::size_t(n));
      for (long i = 0; i < n; ++i) ASSERT_EQ(out[std::size_t(i)], 10 * i);
    } else {
      EXPECT_THROW(run(), std::runtime_error);
      ASSERT_LE(out.size(), std::size_t(failing)) << "items after the failed one were output";
      for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 10 * long(i));
      // The input stopped: let the completer finish with the promises that were made.
      std::lock_guard lock(m);
      called = n;
      for (auto& p : promises)
        if (!p) p = std::make_unique<heddle::promise<long>>(rt);
    }
    cv.notify_all();
    completer.join();
  }
}

// From inside a task (the root runs on that worker) and from several outside threads at once.
TEST(ParallelPipeline, FromTasksAndThreadsConcurrently) {
  heddle_test::watchdog dog("pipeline concurrently", std::chrono::seconds(120));
  heddle::runtime rt(2);
  auto sum_of = [](long n) {
    long next = 0, sum = 0;
    heddle::parallel_pipeline(8, make_filter<void, long>(filter_mode::serial_in_order, [&](flow_control& fc) -> long {
                                   if (next == n) fc.stop();
                                   return next++;
                                 }) & make_filter<long, long>(filter_mode::parallel, [](long v) {
                                   return v * v;
                                 }) & make_filter<long, void>(filter_mode::serial_out_of_order, [&](long v) {
                                   sum += v;
                                 }));
    return sum;
  };
  const long n = 5'000;
  const long want = (n - 1) * n * (2 * n - 1) / 6;
  EXPECT_EQ(rt.task([&] { return sum_of(n); }).get(), want);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 5; ++round)
        if (sum_of(n) == want) good++;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 20);
}

}  // namespace
