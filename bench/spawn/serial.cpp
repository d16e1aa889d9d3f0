// Built at -O1 (see CMakeLists.txt): at -O2 GCC turns one of the two calls into a loop, which would
// make the baseline do less work than the task versions.
#include "fib.hpp"

namespace heddle::bench::spawn {

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

}  // namespace heddle::bench::spawn
