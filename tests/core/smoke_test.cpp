#include <gtest/gtest.h>
#include <heddle/heddle.hpp>

static long fib(int n) {
  if (n < 2) return n;
  auto a = heddle::task(fib, n - 1);
  auto b = heddle::task(fib, n - 2);
  return *a + *b;
}

TEST(Smoke, Fib) {
  auto r = heddle::task(fib, 25);
  EXPECT_EQ(*r, 75025);
  EXPECT_EQ(r.get(), 75025);
}

TEST(Smoke, ThenWhenAllGroupFor) {
  auto a = heddle::task([] { return 20; });
  auto b = heddle::task([] { return 1.5; });
  auto both = heddle::when_all(std::move(a), std::move(b));
  auto [x, y] = both.get();
  EXPECT_EQ(x, 20);
  EXPECT_EQ(y, 1.5);
  auto c = heddle::task([] { return 41; });
  auto d = std::move(c).then([](int v) { return v + 1; });
  EXPECT_EQ(*d, 42);
  std::atomic<int> n{0};
  heddle::task_group g;
  for (int i = 0; i < 100; ++i) g.run([&] { n++; });
  g.wait();
  EXPECT_EQ(n.load(), 100);
  std::vector<int> v(100000, 0);
  heddle::parallel_for(std::size_t{0}, v.size(), [&](std::size_t i) { v[i] = int(i); });
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], int(i));
}
