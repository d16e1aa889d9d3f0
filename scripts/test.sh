#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, one phase per build flavour (scripts/build.sh), each in its own folder:
#
#   release  build/       g++ 12, Release, shared (the default build): every test, oneTBB and MPI
#                         included, the benchmarks' checks, the examples, the plugin tests, the install
#                         test
#   tsan     build-tsan/  g++ 12, ThreadSanitizer, static: every test but oneTBB's and MPI's
#   asan     build-asan/  clang 14, AddressSanitizer + UndefinedBehaviorSanitizer, shared, reduced (no
#                         liburing, MPI, FastJet, HDF5): every test that build has, the plugin tests
#
# Every phase runs even when an earlier one failed. ctest runs with both cores busy (-j2; a test
# that needs both, the multi-process ones, says so with PROCESSORS 2) and writes a JUnit report
# (FOLDER/ctest-junit.xml), from which the counts are read (scripts/junit_summary.py). At the end:
# each phase's build and test time, the slowest tests, the tests that did not run (skipped) and
# those that failed, each with its phase, then one line `N passed, N failed, N skipped` (summed over
# the phases; a build that fails counts as one failure), and a non-zero exit status if anything
# failed.
#
# Usage: scripts/test.sh [PHASE...]        (default: release tsan asan)
# Settings (environment): HEDDLE_CTEST_JOBS (ctest -j, default 2), HEDDLE_CTEST_ARGS (more ctest
# arguments, e.g. "-R Future"), HEDDLE_BUILD_JOBS, HEDDLE_CMAKE_ARGS (see scripts/build.sh), and
# TSAN_OPTIONS / ASAN_OPTIONS / UBSAN_OPTIONS, appended to the defaults below (later ones win).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1

phases=("$@")
[[ ${#phases[@]} -gt 0 ]] || phases=(release tsan asan)
for p in "${phases[@]}"; do
  case "$p" in
    release | tsan | asan) ;;
    *) echo "test.sh: unknown phase '$p' (release, tsan or asan)" >&2; exit 2 ;;
  esac
done

# shellcheck source=scripts/sanitizer_options.sh
source scripts/sanitizer_options.sh

ctest_jobs=${HEDDLE_CTEST_JOBS:-2}

total_passed=0
total_failed=0
total_skipped=0
table=()
skipped_list=()
failed_list=()
slowest_list=()
start_all=$SECONDS

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

for phase in "${phases[@]}"; do
  dir=$(scripts/build.sh --dir "$phase")
  echo
  echo "=================== $phase: build in $dir ==================="
  t0=$SECONDS
  if ! scripts/build.sh "$phase"; then
    t1=$SECONDS
    total_failed=$((total_failed + 1))
    table+=("$(printf '%-8s %-12s build %8s  tests %8s  BUILD FAILED (counted as 1 failure)' \
      "$phase" "$dir" "$(fmt_time $((t1 - t0)))" "-")")
    continue
  fi
  t1=$SECONDS

  echo
  echo "=================== $phase: ctest -j$ctest_jobs in $dir ==================="
  log=$dir/ctest.log
  junit=$dir/ctest-junit.xml
  rm -f "$junit"
  # All of every test's output is kept (ctest keeps 1 KiB of a passed one's by default): the summary
  # reads each test of a suite from it (junit_summary.py).
  # shellcheck disable=SC2086  # HEDDLE_CTEST_ARGS is a list of words on purpose
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$ctest_jobs" --output-junit ctest-junit.xml \
     --test-output-size-passed 8388608 --test-output-size-failed 8388608 \
     ${HEDDLE_CTEST_ARGS:-}) 2>&1 | tee "$log"
  ctest_rc=${PIPESTATUS[0]}
  t2=$SECONDS

  if summary=$(scripts/junit_summary.py "$junit" "$phase" --slowest 5); then
    read -r _ passed failed skipped < <(grep '^counts ' <<<"$summary")
    mapfile -t lines < <(sed -n 's/^failed //p' <<<"$summary")
    failed_list+=("${lines[@]}")
    mapfile -t lines < <(sed -n 's/^skipped //p' <<<"$summary")
    skipped_list+=("${lines[@]}")
    mapfile -t lines < <(sed -n "s/^slow /$phase: /p" <<<"$summary")
    slowest_list+=("${lines[@]}")
    result="$passed passed, $failed failed, $skipped skipped"
    if [[ $ctest_rc -ne 0 && $failed -eq 0 ]]; then
      failed=1
      result="$result; ctest exited with $ctest_rc (counted as 1 failure)"
    fi
  else
    passed=0
    failed=1
    skipped=0
    result="ctest wrote no JUnit report (exit status $ctest_rc; counted as 1 failure)"
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))
  table+=("$(printf '%-8s %-12s build %8s  tests %8s  %s' \
    "$phase" "$dir" "$(fmt_time $((t1 - t0)))" "$(fmt_time $((t2 - t1)))" "$result")")
done

echo
echo "=================== summary ==================="
printf '%s\n' "${table[@]}"
echo "total time $(fmt_time $((SECONDS - start_all)))"
if [[ ${#slowest_list[@]} -gt 0 ]]; then
  echo "slowest tests (seconds):"
  printf '  %s\n' "${slowest_list[@]}"
fi
if [[ ${#skipped_list[@]} -gt 0 ]]; then
  echo "skipped (the reason is in each phase's ctest.log):"
  printf '  %s\n' "${skipped_list[@]}"
fi
if [[ ${#failed_list[@]} -gt 0 ]]; then
  echo "failed (the output is in each phase's ctest.log):"
  printf '  %s\n' "${failed_list[@]}"
fi
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[[ $total_failed -eq 0 ]]
