// SPDX-License-Identifier: Apache-2.0
// Futures composed without blocking: then, when_all, and an exception that travels down a chain.
#include <heddle/heddle.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <tuple>

int main() {
  heddle::runtime rt(2);
  auto load = rt.task([] { return std::string("42"); });
  auto parse = std::move(load).then([](std::string s) { return std::stoi(s); });
  auto other = rt.task([] { return 0.5; });
  auto both = heddle::when_all(std::move(parse), std::move(other));
  auto [n, x] = both.get();
  std::printf("when_all gave %d and %.1f\n", n, x);

  auto failing = rt.task([]() -> int { throw std::runtime_error("sensor offline"); });
  auto doubled = std::move(failing).then([](int v) { return 2 * v; });  // skipped: the error passes on
  try {
    doubled.get();
  } catch (const std::exception& e) {
    std::printf("the chain failed as expected: %s\n", e.what());
  }
}
