// What a failed test prints so that it can be run again the same way: the build it ran in, the
// worker counts, the heddle settings of its environment, the seeds it drew and the context it
// declared (a backend, a node count), and the command line that runs it alone.
//
// Every test program links tests/support/test_main.cpp, whose listener prints this block after a
// failed test:
//
//   [ REPRODUCE ] build/bin/core_tests --gtest_filter=Stress.RandomSpawnTreesMatchSerial
//   [ REPRODUCE ] build: tsan (g++ 12.2.0, ThreadSanitizer); workers: 2 by default (cores: 2)
//   [ REPRODUCE ] seed random_trees=20261207 (HEDDLE_TEST_SEED=20261207 reruns with it)
//
// A test draws its random numbers from heddle_test::seed() (fixed by default, so a run is
// repeatable; HEDDLE_TEST_SEED replaces every default, `make stress` varies it), and names what it
// runs on with heddle_test::context(). Both are thread-safe; what they record is cleared when the
// next test starts.
#pragma once

#include <cstdint>
#include <string>

namespace heddle_test {

// The seed called `name`: HEDDLE_TEST_SEED (a decimal number) if set, else `fixed`. Recorded for
// the failure report.
std::uint64_t seed(const char* name, std::uint64_t fixed);

// Adds "key=value" to what a failure of the current test prints (the backend, the node count...).
void context(const std::string& key, const std::string& value);

// For programs with a main of their own (an MPI rank, a node of a session): installs the listener
// that test_main.cpp installs. Call after ::testing::InitGoogleTest. `launcher` is what the rerun
// command starts the program with ("mpirun -np 2", "heddle-run -n 3 --backend shm"), if anything;
// `setting` is said with every failure of the program (the backend and node count, say).
void install_reproduce_listener(const char* argv0, const std::string& launcher = "", const std::string& setting = "");

}  // namespace heddle_test
