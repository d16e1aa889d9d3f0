# SPDX-License-Identifier: Apache-2.0
# heddle_gtest_suites(<target> LABELS <labels>... TIMEOUT <seconds> [TEST_FILTER <filter>]
#                     [TEST_PREFIX <prefix>] [ENVIRONMENT <var=value>...] [COSTS <suite>=<cost>...])
#
# Like gtest_discover_tests(... DISCOVERY_MODE PRE_TEST), but one ctest test per GoogleTest suite
# (`<prefix><suite>`, running `<target> --gtest_filter=<suite>.*`) instead of one per test. The
# sanitizer flavours use it (HEDDLE_TEST_GRANULARITY=suite, scripts/build.sh): a program's start
# under ThreadSanitizer or AddressSanitizer costs 0.08 to 0.14 s of CPU (the sanitizer's own start,
# LeakSanitizer's scan at exit), paid once a suite (137 of them) rather than once a test (about
# 810). On the 2-core VM the tsan phase's tests took 3m36 instead of 4m14, the asan phase's 2m18
# instead of 3m07. Each test of the suite still reports on its own: scripts/junit_summary.py reads
# GoogleTest's lines in the output ctest keeps (ctest --test-output-size-passed) and counts, names
# and times every test, and a failed test prints its [ REPRODUCE ] block (support/reproduce.hpp) as
# it does alone.
#
# COSTS: ctest starts the most costly tests first (until it has timings of its own, on a clean
# clone never), so the longest suites are named here rather than left to start last.
#
# The list is made when ctest runs, from `<target> --gtest_list_tests` (again whenever the program
# is newer than the list), as gtest_discover_tests' PRE_TEST mode does.
function(heddle_gtest_suites target)
  cmake_parse_arguments(arg "" "TIMEOUT;TEST_FILTER;TEST_PREFIX" "LABELS;ENVIRONMENT;COSTS" ${ARGN})
  get_property(counter DIRECTORY PROPERTY heddle_gtest_suites_counter)
  if(NOT counter)
    set(counter 0)
  endif()
  math(EXPR counter "${counter} + 1")
  set_property(DIRECTORY PROPERTY heddle_gtest_suites_counter ${counter})
  set(base "${CMAKE_CURRENT_BINARY_DIR}/${target}[suites${counter}]")
  # The generated include sets the inputs of gtest_suites_list.cmake, which writes and includes the list.
  file(GENERATE OUTPUT "${base}_include.cmake" CONTENT
"set(heddle_suites_program [==[$<TARGET_FILE:${target}>]==])
set(heddle_suites_list [==[${base}_tests.cmake]==])
set(heddle_suites_workdir [==[${CMAKE_CURRENT_BINARY_DIR}]==])
set(heddle_suites_filter [==[${arg_TEST_FILTER}]==])
set(heddle_suites_prefix [==[${arg_TEST_PREFIX}]==])
set(heddle_suites_labels [==[${arg_LABELS}]==])
set(heddle_suites_timeout [==[${arg_TIMEOUT}]==])
set(heddle_suites_environment [==[${arg_ENVIRONMENT}]==])
set(heddle_suites_costs [==[${arg_COSTS}]==])
include([==[${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gtest_suites_list.cmake]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${base}_include.cmake")
endfunction()
