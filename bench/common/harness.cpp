#include "harness.hpp"

#include <algorithm>

namespace heddle::bench {

double result::median() const {
  auto s = samples;
  std::sort(s.begin(), s.end());
  const auto n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}
double result::min() const { return *std::min_element(samples.begin(), samples.end()); }
double result::max() const { return *std::max_element(samples.begin(), samples.end()); }

std::vector<result> run_interleaved(std::vector<variant>& variants, int reps) {
  std::vector<result> rs;
  for (auto& v : variants) {
    v.run();
    rs.push_back({v.name, v.threads, v.config, {}});
  }
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < variants.size(); ++i) rs[i].samples.push_back(variants[i].run());
  return rs;
}

const result& find(const std::vector<result>& rs, const std::string& name, unsigned threads,
                   const std::string& config) {
  for (auto& r : rs)
    if (r.name == name && r.threads == threads && r.config == config) return r;
  throw std::logic_error("heddle-bench: no result for " + name + " at " + std::to_string(threads) + " threads" +
                         (config.empty() ? "" : " (" + config + ")"));
}

}  // namespace heddle::bench
