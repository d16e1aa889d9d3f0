// SPDX-License-Identifier: Apache-2.0
// The offload API on the loopback backend: every node in this process, every frame through the
// engine, the registry and the serialisation (the wire is the only thing missing).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <heddle/am.hpp>
#include <heddle/core.hpp>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace loopback_test {
namespace {

namespace off = heddle::offload;

int scale(int a, std::string s) { return a * static_cast<int>(s.size()); }
off::node_id where_am_i() { return off::this_node(); }
std::atomic<int> pinged{0};
void note(std::string s) { pinged.fetch_add(static_cast<int>(s.size())); }
void fail_with(std::string what) { throw std::invalid_argument(what); }
std::map<std::string, std::vector<double>> shapes(std::pair<int, std::string> p, std::tuple<char, std::optional<int>> t,
                                                  std::array<std::string, 2> a) {
  std::map<std::string, std::vector<double>> m;
  m[p.second] = std::vector<double>(static_cast<std::size_t>(p.first), 1.5);
  m[a[0] + a[1]] = {double(std::get<0>(t)), double(std::get<1>(t).value_or(-1))};
  return m;
}
std::uint64_t checksum(std::vector<std::uint8_t> v) { return std::accumulate(v.begin(), v.end(), std::uint64_t{0}); }
// Asks `next` (and so on around the ring) for its number: nested offloads, each from a handler.
int relay(off::node_id next, int hops) {
  if (hops == 0) return static_cast<int>(off::this_node());
  return off::sync(next, heddle::f2f<&relay>((next + 1) % off::num_nodes(), hops - 1)) + 100;
}
// Overloads, named by their pointer types; a const reference in and a struct (bitwise) out.
int twice(int a) { return 2 * a; }
double twice(double a) { return 2 * a; }
struct extent {
  std::uint32_t length;
  std::uint32_t spaces;
};
extent measure(const std::string& s) {
  return {static_cast<std::uint32_t>(s.size()), static_cast<std::uint32_t>(std::count(s.begin(), s.end(), ' '))};
}
double sum_buffer(off::buffer_ptr<double> b, std::size_t n) {
  const double* p = b.get();
  return std::accumulate(p, p + n, 0.0);
}

off::session_options three_loopback_nodes() {
  off::session_options o;
  o.transport = off::backend::loopback;
  o.nodes = 3;
  return o;
}

struct LoopbackSession : ::testing::Test {
  off::session s{three_loopback_nodes()};
};

TEST_F(LoopbackSession, AsyncSyncAndPing) {
  EXPECT_EQ(off::num_nodes(), 3u);
  EXPECT_EQ(off::this_node(), 0u);
  heddle::future<int> f = off::async(1, heddle::f2f<&scale>(2, std::string("abc")));
  EXPECT_EQ(f.get(), 6);
  EXPECT_EQ(off::sync(2, heddle::f2f<&scale>(3, std::string("ab"))), 6);
  EXPECT_EQ(off::sync(2, heddle::f2f<&where_am_i>()), 2u);
  EXPECT_EQ(off::sync(0, heddle::f2f<&where_am_i>()), 0u);
  EXPECT_EQ(off::sync(1, heddle::f2f<&where_am_i>(), heddle::strategy::short_task), 1u);
  pinged = 0;
  off::ping(1, heddle::f2f<&note>(std::string("hello")));
  off::ping(2, heddle::f2f<&note>(std::string("hi")));
  while (pinged.load() != 7) std::this_thread::yield();
}

TEST_F(LoopbackSession, ArgumentTypesTravel) {
  auto m = off::sync(1, heddle::f2f<&shapes>(std::pair<int, std::string>(3, "x"),
                                             std::tuple<char, std::optional<int>>('a', 7),
                                             std::array<std::string, 2>{"p", "q"}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m["x"], std::vector<double>(3, 1.5));
  EXPECT_EQ(m["pq"], (std::vector<double>{97.0, 7.0}));
}

TEST_F(LoopbackSession, OverloadsAndStructResultsTravel) {
  EXPECT_EQ(off::sync(1, heddle::f2f<static_cast<int (*)(int)>(&twice)>(21)), 42);
  EXPECT_EQ(off::sync(2, heddle::f2f<static_cast<double (*)(double)>(&twice)>(1.25)), 2.5);
  const extent e = off::async(1, heddle::f2f<&measure>(std::string("a b c"))).get();
  EXPECT_EQ(e.length, 5u);
  EXPECT_EQ(e.spaces, 2u);
}

TEST_F(LoopbackSession, RemoteExceptionsNameNodeHandlerAndType) {
  heddle::future<void> f = off::async(2, heddle::f2f<&fail_with>(std::string("bad input")));
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const off::remote_error& e) {
    EXPECT_EQ(e.node(), 2u);
    const std::string w = e.what();
    EXPECT_NE(w.find("node 2 ran"), std::string::npos) << w;
    EXPECT_NE(w.find("fail_with"), std::string::npos) << w;
    EXPECT_NE(w.find("std::invalid_argument: bad input"), std::string::npos) << w;
  }
}

TEST_F(LoopbackSession, MissingNodeIsAnError) {
  heddle::future<int> f = off::async(7, heddle::f2f<&scale>(1, std::string("x")));
  EXPECT_THROW(f.get(), off::session_error);
}

TEST_F(LoopbackSession, LargePayload) {
  // 64 MiB; 4 MiB under a sanitizer, as in nodes_test (its copies dominate there; the same paths).
#if defined(HEDDLE_TEST_SANITIZED)
  std::vector<std::uint8_t> v(4u << 20);
#else
  std::vector<std::uint8_t> v(64u << 20);
#endif
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i * 7);
  const std::uint64_t expect = std::accumulate(v.begin(), v.end(), std::uint64_t{0});
  EXPECT_EQ(off::sync(1, heddle::f2f<&checksum>(v)), expect);
}

TEST_F(LoopbackSession, NestedOffloadsAroundTheNodes) {
  // 0 → 1 → 2 → 0 → 1: four hops, the last one answers with its node.
  EXPECT_EQ(off::sync(1, heddle::f2f<&relay>(off::node_id{2}, 3)), 300 + 1);
}

TEST_F(LoopbackSession, ManyConcurrentAsyncs) {
  std::vector<heddle::future<int>> fs;
  for (int i = 0; i < 10000; ++i) fs.push_back(off::async(1 + i % 2, heddle::f2f<&scale>(i, std::string("ab"))));
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(fs[i].get(), 2 * i);
}

TEST_F(LoopbackSession, BuffersPutGetCopyFree) {
  const std::size_t n = 1000;
  std::vector<double> local(n);
  std::iota(local.begin(), local.end(), 1.0);
  off::buffer_ptr<double> b = off::allocate<double>(1, n);
  off::buffer_ptr<double> b2 = off::allocate<double>(2, n);
  EXPECT_EQ(b.node(), 1u);
  EXPECT_EQ(b.size(), n);
  off::put(local.data(), b, n).get();
  EXPECT_EQ(off::sync(1, heddle::f2f<&sum_buffer>(b, n)), n * (n + 1) / 2.0);
  off::copy(b, b2, n).get();
  std::vector<double> back(n);
  off::get(b2, back.data(), n).get();
  EXPECT_EQ(back, local);
  off::get(b + 10, back.data(), 5).get();
  EXPECT_EQ(back[0], 11.0);
  EXPECT_THROW((void)off::put(local.data(), b, n + 1), std::out_of_range);
  EXPECT_THROW((void)b.get(), off::session_error);  // node 1's memory, seen from node 0
  off::free(b);
  EXPECT_THROW(off::free(b), off::remote_error);
  EXPECT_THROW(off::get(b, back.data(), n).get(), off::remote_error);
  off::free(b2);
}

TEST(LoopbackOptions, CommandLineOptionsAreTakenOut) {
  char a0[] = "prog", a1[] = "--heddle-backend=loopback", a2[] = "x", a3[] = "--heddle-nodes=4";
  char* argv_[] = {a0, a1, a2, a3, nullptr};
  int argc = 4;
  char** argv = argv_;
  const off::session_options o = off::options_from(argc, argv);
  EXPECT_EQ(argc, 2);
  EXPECT_STREQ(argv[1], "x");
  EXPECT_EQ(o.nodes, 4u);
  char b1[] = "--heddle-nodes=zero";
  char* bad_[] = {a0, b1, nullptr};
  int bc = 2;
  char** bad = bad_;
  try {
    off::options_from(bc, bad);
    FAIL();
  } catch (const off::session_error& e) {
    EXPECT_NE(std::string(e.what()).find("--heddle-nodes=zero"), std::string::npos) << e.what();
  }
}

TEST(LoopbackOptions, RunWrapsMainForNodeZero) {
  char a0[] = "prog", a1[] = "--heddle-backend=loopback", a2[] = "--heddle-nodes=3", a3[] = "input";
  char* argv[] = {a0, a1, a2, a3, nullptr};
  const int status = off::run(4, argv, [](int argc, char** args) {
    EXPECT_EQ(argc, 2);  // the --heddle-* options are gone
    EXPECT_STREQ(args[1], "input");
    return off::sync(2, heddle::f2f<&scale>(7, std::string("abc"))) == 21 ? 5 : 6;
  });
  EXPECT_EQ(status, 5);
  char* argv2[] = {a0, a1, a2, a3, nullptr};  // run takes the options out of the array it is given
  testing::internal::CaptureStderr();
  EXPECT_EQ(off::run(4, argv2, [](int, char**) -> int { throw std::runtime_error("no input"); }), 1);
  char b1[] = "--heddle-nodes=none";
  char* bad[] = {a0, b1, nullptr};
  EXPECT_EQ(off::run(2, bad, [](int, char**) { return 0; }), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("prog: no input"), std::string::npos) << err;
  EXPECT_NE(err.find("prog: heddle::offload: --heddle-nodes=none"), std::string::npos) << err;
}

#if !HEDDLE_TEST_HAVE_MPI
// Built without MPI, a session asking for the mpi backend fails and says why; the others work.
TEST(LoopbackOptions, WithoutMpiTheMpiBackendIsAClearError) {
  off::session_options o;
  o.transport = off::backend::mpi;
  try {
    off::session s(o);
    ADD_FAILURE() << "a session on the mpi backend started in a build without MPI";
  } catch (const off::session_error& e) {
    EXPECT_NE(std::string(e.what()).find("built without MPI"), std::string::npos) << e.what();
  }
}
#endif

TEST(LoopbackOptions, NoSessionIsAClearError) {
  EXPECT_THROW(off::this_node(), off::session_error);
  heddle::future<int> f = off::async(0, heddle::f2f<&scale>(1, std::string("x")));
  EXPECT_THROW(f.get(), off::session_error);
  // sync's own path (the call and its wait in one function) fails the same way, saying why.
  try {
    off::sync(0, heddle::f2f<&scale>(1, std::string("x")));
    ADD_FAILURE() << "sync without a session returned";
  } catch (const off::session_error& e) {
    EXPECT_NE(std::string(e.what()).find("no session is open"), std::string::npos) << e.what();
  }
}

// A coroutine awaiting offloads: each co_await of off::async suspends it until the reply arrives;
// a remote exception comes out of the co_await.
heddle::co_task<int> offloads_in_turn() {
  const int a = co_await off::async(1, heddle::f2f<&scale>(2, std::string("abc")));
  const int b = co_await off::async(2, heddle::f2f<&scale>(a, std::string("xy")));
  try {
    co_await off::async(1, heddle::f2f<&fail_with>(std::string("remote says no")));
  } catch (const std::exception& e) {
    if (std::string(e.what()).find("remote says no") == std::string::npos) co_return -1;
    co_return b;
  }
  co_return -2;
}

TEST_F(LoopbackSession, ACoroutineAwaitsOffloads) { EXPECT_EQ(heddle::spawn(offloads_in_turn()).get(), 12); }

}  // namespace

}  // namespace loopback_test
