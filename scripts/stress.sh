#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make stress: the stress, race and multi-process tests, each repeated until it fails or has passed
# N times (ctest --repeat until-fail:N), in the Release and ThreadSanitizer builds. Not part of
# make test: at N = 20 it took 60m35 on the 2-core VM (196 tests, release and tsan).
#
# The selection: every test whose name says it stresses or races (Stress, Race/Racing, Concurrent,
# LostWakeups, ...: the regex below), and every test labelled `multiprocess` (several processes or
# nodes: run alone, PROCESSORS 2). Seeds stay the suite's fixed ones unless HEDDLE_TEST_SEED is set.
#
# Prints a table: each test, in each build, with how many of its N repeats passed (a failure stops
# that test's repeats: "7/20 FAILED" passed 7 times, then failed), and ends with
# `N passed, N failed` (tests, not repeats); exits non-zero if any test failed.
#
# Usage: scripts/stress.sh [N] [PHASE...]     (default: 20 release tsan)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1

repeat=20
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  repeat=$1
  shift
fi
phases=("$@")
[[ ${#phases[@]} -gt 0 ]] || phases=(release tsan)

stress_regex='Stress|Rac(e|es|ing)[A-Z]|Concurrent|LostWakeups|FromManyThreads|ForeignThreads|Thieves'

# The same sanitizer settings as the suite.
# shellcheck source=scripts/sanitizer_options.sh
source scripts/sanitizer_options.sh

table=$(mktemp)
trap 'rm -f "$table"' EXIT
start=$SECONDS
for phase in "${phases[@]}"; do
  dir=$(scripts/build.sh --dir "$phase") || exit 2
  echo "=================== $phase: build in $dir ==================="
  # One ctest test a GoogleTest test, whatever the flavour makes by default (suites, under the
  # sanitizers): each is repeated and counted on its own. make test's next build of the folder
  # makes its suites again (only ctest's lists change, nothing is compiled).
  if ! HEDDLE_CMAKE_ARGS="${HEDDLE_CMAKE_ARGS:-} -DHEDDLE_TEST_GRANULARITY=test" scripts/build.sh "$phase"; then
    printf '%s\t%s\t%s\n' "$phase" "(the build)" "FAILED" >>"$table"
    continue
  fi
  for selection in stress multiprocess; do
    if [[ $selection == stress ]]; then
      select=(-R "$stress_regex" -LE multiprocess)
    else
      select=(-L multiprocess)
    fi
    echo "=================== $phase: ctest ${select[*]} --repeat until-fail:$repeat ==================="
    log=$dir/stress-$selection.log
    (cd "$dir" && ctest -j 2 --repeat "until-fail:$repeat" "${select[@]}") 2>&1 | tee "$log"
    # "Test  #12: Name ....   Passed  1.2 sec" once per repeat: count the passes per test, and
    # note a failure (its repeats end there). The outcome is read after the dots, not in the name
    # (a test may be called ...ExceptionTerminates...).
    awk -v phase="$phase" -v n="$repeat" '
      match($0, /Test +#[0-9]+: [^ ]+ /) {
        name = substr($0, RSTART, RLENGTH); sub(/^Test +#[0-9]+: /, "", name); sub(/ $/, "", name)
        status = substr($0, RSTART + RLENGTH); sub(/^\.* */, "", status)
        if (!(name in passed)) { passed[name] = 0; order[++k] = name }
        if (status ~ /^Passed/) passed[name]++; else failed[name] = 1
      }
      END {
        for (i = 1; i <= k; i++) {
          t = order[i]
          printf "%s\t%s\t%d/%d%s\n", phase, t, passed[t], n, (t in failed) ? " FAILED" : ""
        }
      }' "$log" >>"$table"
  done
done

echo
echo "=================== stress: $repeat repeats a test ==================="
awk -F'\t' '{ printf "%-8s %-90s %s\n", $1, $2, $3 }' "$table"
failed=$(grep -c 'FAILED' "$table")
total=$(wc -l <"$table")
echo "total time $(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s"
echo "$((total - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
