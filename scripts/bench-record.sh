#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Re-measures the suites whose results docs/benchmarks.md cites, each at the scale and repetitions
# its section states, and records each report in bench/recorded/<suite>.<machine>.json (replacing
# that machine's last one); then rewrites the page's summary table from the recorded results.
#   scripts/bench-record.sh [BUILD_DIR] [SUITE...]     (default: build, every suite below)
# Run it on an otherwise idle machine: the suites run one after another, each alone.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=build
if [[ $# -gt 0 && -d $1 ]]; then build=$1; shift; fi
bench=$(realpath -m "$build/bin/heddle-bench")
[[ -x $bench ]] || { echo "bench-record.sh: $bench was not built (make build)" >&2; exit 1; }

# suite and its arguments: the run each section of docs/benchmarks.md shows.
declare -A args=(
  [spawn]="--reps 15"
  [coroutines]="--reps 5"
  [stats]="--reps 9"
  [matmul]="--reps 9"
  [heat]="--reps 9"
  [lu]="--reps 9"
  [othello]="--quick --reps 9"
  [blocking]="--quick --reps 15"
  [waits]="--quick"
  [dispatch]="--reps 9"
  [am]="--reps 9"
  [reco]="--reps 7"
  [algorithms]="--reps 9"
)
order=(spawn coroutines stats matmul heat lu othello blocking waits dispatch am reco algorithms)
suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=("${order[@]}")
for s in "${suites[@]}"; do
  [[ -n ${args[$s]+x} ]] || { echo "bench-record.sh: no recorded run for suite '$s' (known: ${order[*]})" >&2; exit 2; }
done
cd "$root"  # the reports' commands then name bench/recorded as a reader types it
mkdir -p results/record
for s in "${suites[@]}"; do
  echo "== heddle-bench $s ${args[$s]} --record bench/recorded ($(date -u +%H:%M:%S))"
  # shellcheck disable=SC2086
  "$bench" "$s" ${args[$s]} --record bench/recorded | tee "results/record/$s.md"
done
scripts/bench-summary.sh update "$bench"
