#!/usr/bin/env bash
# The whole test suite, one phase per build flavour, each in its own folder:
#
#   release  build/        Release build + ctest (includes the install test)
#   tsan     build-tsan/   ThreadSanitizer build + ctest
#   asan     build-asan/   AddressSanitizer build, without liburing, MPI, FastJet and HDF5 (the reduced build) + ctest
#   clang    build-clang/  clang++ 14 build with UBSan, shared libraries, of the core and its tests + ctest
#
# Every phase runs even when an earlier one failed. At the end: the time of each phase, the tests
# that did not run (skipped) and those that failed, each with its phase, then one line
# `N passed, N failed, N skipped` (summed over the ctest runs; a build that fails counts as one
# failure), and a non-zero exit status if anything failed.
#
# Usage: scripts/test.sh [PHASE...]        (default: release tsan asan clang)
# Settings (environment): HEDDLE_CTEST_JOBS (ctest -j, default 2), HEDDLE_CTEST_ARGS (more ctest
# arguments, e.g. "-R Future"), HEDDLE_BUILD_JOBS, HEDDLE_CMAKE_ARGS (see scripts/build.sh), and
# TSAN_OPTIONS / ASAN_OPTIONS / UBSAN_OPTIONS, appended to the defaults below (later ones win).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1

phases=("$@")
[[ ${#phases[@]} -gt 0 ]] || phases=(release tsan asan clang)
for p in "${phases[@]}"; do
  case "$p" in
    release | tsan | asan | clang) ;;
    *) echo "test.sh: unknown phase '$p' (release, tsan, asan or clang)" >&2; exit 2 ;;
  esac
done

# Sanitizer settings: stop at the first report (so a report fails its test), full stacks.
# No detect_stack_use_after_return: it moves locals off the thread's stack, and the runtime
# measures its stack budget from the addresses of locals.
tsan_defaults=halt_on_error=1:second_deadlock_stack=1:history_size=4
asan_defaults=detect_leaks=1:halt_on_error=1:check_initialization_order=1:strict_init_order=1
ubsan_defaults=halt_on_error=1:print_stacktrace=1
export TSAN_OPTIONS="$tsan_defaults${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
export ASAN_OPTIONS="$asan_defaults${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="$ubsan_defaults${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

ctest_jobs=${HEDDLE_CTEST_JOBS:-2}

total_passed=0
total_failed=0
total_skipped=0
table=()
skipped_list=()
failed_list=()
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
  # shellcheck disable=SC2086  # HEDDLE_CTEST_ARGS is a list of words on purpose
  (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$ctest_jobs" ${HEDDLE_CTEST_ARGS:-}) 2>&1 | tee "$log"
  ctest_rc=${PIPESTATUS[0]}
  t2=$SECONDS

  # "100% tests passed, 0 tests failed out of 130"; skipped tests are listed under
  # "The following tests did not run:" and count as neither passed nor failed here.
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -n $line ]]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")
    out_of=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    mapfile -t skipped_here < <(sed -n '/^The following tests did not run:/,/^$/p' "$log" |
      sed -nE 's/^\s+[0-9]+ - (.*)$/\1/p')
    skipped=${#skipped_here[@]}
    for t in "${skipped_here[@]}"; do skipped_list+=("$phase: $t"); done
    # Under "The following tests FAILED:", a line "12 - Name (Failed)" each: named again in the
    # summary, the part of a long CI log that a reader (or a log's tail) sees.
    mapfile -t failed_here < <(sed -n '/^The following tests FAILED:/,/^$/p' "$log" |
      sed -nE 's/^\s+[0-9]+ - (.*)$/\1/p')
    for t in "${failed_here[@]}"; do failed_list+=("$phase: $t"); done
    passed=$((out_of - failed - skipped))
    result="$passed passed, $failed failed, $skipped skipped (of $out_of)"
    if [[ $ctest_rc -ne 0 && $failed -eq 0 ]]; then
      failed=1
      result="$result; ctest exited with $ctest_rc (counted as 1 failure)"
    fi
  else
    passed=0
    failed=1
    skipped=0
    result="ctest gave no summary (exit status $ctest_rc; counted as 1 failure)"
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
if [[ ${#skipped_list[@]} -gt 0 ]]; then
  echo "did not run (the reason is in each phase's ctest.log):"
  printf '  %s\n' "${skipped_list[@]}"
fi
if [[ ${#failed_list[@]} -gt 0 ]]; then
  echo "failed (the output is in each phase's ctest.log):"
  printf '  %s\n' "${failed_list[@]}"
fi
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[[ $total_failed -eq 0 ]]
