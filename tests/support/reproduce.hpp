// SPDX-License-Identifier: Apache-2.0
// What a failed test prints so that it can be run again the same way: the command line that runs
// it alone (with the HEDDLE_* settings in effect, and the launcher of a multi-process program), the
// build it ran in, the worker counts, the program's setting (a backend, a node count) and the seeds
// the test drew.
//
// Every test program links tests/support/test_main.cpp, whose listener prints this block after a
// failed test:
//
//   [ REPRODUCE ] build-tsan/bin/algorithm_tests --gtest_filter=ParallelSort.ComparatorExceptionIsRethrown
//   [ REPRODUCE ] build: tsan (g++ 12.2.0, ThreadSanitizer, NDEBUG); workers: 2 by default (cores: 2)
//   [ REPRODUCE ] seeds: keys=1 keys=2 keys=4 (HEDDLE_TEST_SEED=N reruns every seed as N)
//
// A test draws its random numbers from heddle_test::seed() (fixed by default, so a run is
// repeatable; HEDDLE_TEST_SEED replaces every default). Thread-safe; what it records is cleared when
// the next test starts. A program with a main of its own says how it is launched and on what (the
// backend, the node count) through install_reproduce_listener.
#pragma once

#include <cstdint>
#include <string>

namespace heddle_test {

// The seed called `name`: HEDDLE_TEST_SEED (a decimal number) if set, else `fixed`. Recorded for
// the failure report.
std::uint64_t seed(const char* name, std::uint64_t fixed);

// For programs with a main of their own (an MPI rank, a node of a session): installs the listener
// that test_main.cpp installs. Call after ::testing::InitGoogleTest. `launcher` is what the rerun
// command starts the program with ("mpirun -np 2", "heddle-run -n 3 --backend shm"), if anything;
// `setting` is said with every failure of the program (the backend and node count, say).
void install_reproduce_listener(const char* argv0, const std::string& launcher = "", const std::string& setting = "");

}  // namespace heddle_test
