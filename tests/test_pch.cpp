// SPDX-License-Identifier: Apache-2.0
// The owner of the test programs' precompiled header (tests/CMakeLists.txt, heddle_test_pch): the
// header is made from this target's flags and reused by every heddle_test_program.
