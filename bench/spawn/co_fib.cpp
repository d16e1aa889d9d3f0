// SPDX-License-Identifier: Apache-2.0
#include <heddle/heddle.hpp>

#include "fib.hpp"

namespace heddle::bench::spawn {

// fib_heddle's shape as coroutines: both children spawned, both awaited (the awaiting coroutine
// holds no worker meanwhile).
heddle::co_task<long> co_fib(int n) {
  if (n < 2) co_return n;
  heddle::future<long> a = heddle::spawn(co_fib(n - 1));
  heddle::future<long> b = heddle::spawn(co_fib(n - 2));
  co_return co_await std::move(a) + co_await std::move(b);
}

// One child spawned, the other run at once by co_await (symmetric transfer, no record).
heddle::co_task<long> co_fib_inline(int n) {
  if (n < 2) co_return n;
  heddle::future<long> a = heddle::spawn(co_fib_inline(n - 1));
  const long b = co_await co_fib_inline(n - 2);
  co_return co_await std::move(a) + b;
}

}  // namespace heddle::bench::spawn
