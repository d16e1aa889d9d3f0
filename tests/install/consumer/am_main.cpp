// SPDX-License-Identifier: Apache-2.0
// Active messages from an installed heddle: three loopback nodes, a call on each, a buffer filled
// with put and read back with get.
#include <heddle/am.hpp>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {
int length_times(std::string s, int k) { return static_cast<int>(s.size()) * k; }
}  // namespace

int main(int argc, char** argv) {
  return heddle::offload::run(argc, argv, [](int, char**) {
    namespace off = heddle::offload;
    int bad = 0;
    for (off::node_id n = 0; n < off::num_nodes(); ++n)
      if (off::sync(n, heddle::f2f<&length_times>(std::string("abc"), static_cast<int>(n))) != 3 * static_cast<int>(n))
        ++bad;
    std::vector<int> v(1000), back(1000);
    std::iota(v.begin(), v.end(), 0);
    off::buffer_ptr<int> b = off::allocate<int>(off::num_nodes() - 1, v.size());
    off::put(v.data(), b, v.size()).get();
    off::get(b, back.data(), back.size()).get();
    off::free(b);
    if (back != v) ++bad;
    std::printf("active messages on %u nodes: %s\n", off::num_nodes(), bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
  });
}
