// SPDX-License-Identifier: Apache-2.0
// The main of every GoogleTest program of the suite: GoogleTest's own, plus the listener that
// prints how to rerun a failed test (reproduce.hpp).
#include <gtest/gtest.h>

#include "reproduce.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  heddle_test::install_reproduce_listener(argv[0]);
  return RUN_ALL_TESTS();
}
