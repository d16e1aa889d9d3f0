// Built at -O1 (bench/spawn/CMakeLists.txt): at -O2 GCC turns one of the two recursive calls into a
// loop, and the baseline would do less work than the task versions. At -O1 the object code keeps
// both calls (objdump -d serial.cpp.o shows two `call fib_serial`).
#include "fib.hpp"

namespace heddle::bench::spawn {

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

}  // namespace heddle::bench::spawn
