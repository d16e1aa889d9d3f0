#include "suite.hpp"

namespace heddle::bench {

namespace spawn {
void run(const options&, nlohmann::json&);
}

const std::vector<suite>& all_suites() {
  static const std::vector<suite> suites{
      {"spawn", "fib(n) with a task per call: heddle, oneTBB task_group, serial", &spawn::run},
  };
  return suites;
}

}  // namespace heddle::bench
