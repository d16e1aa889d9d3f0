#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/benchmarks.md's summary table is the output of `heddle-bench summary bench/recorded`: the
# figures with a target in the recorded results (one JSON report per suite and machine, written by
# `heddle-bench <suite> --record bench/recorded`). Between the page's two markers
#   <!-- begin: heddle-bench summary bench/recorded -->   and   <!-- end: heddle-bench summary -->
#
#   scripts/bench-summary.sh check  HEDDLE_BENCH   exit 1, with the difference, when the page and
#                                                  the recorded results disagree (ctest:
#                                                  bench_summary_matches_docs)
#   scripts/bench-summary.sh update HEDDLE_BENCH   rewrite the page's table from the results
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:?usage: scripts/bench-summary.sh check|update HEDDLE_BENCH}
bench=${2:?usage: scripts/bench-summary.sh check|update HEDDLE_BENCH}
page=$root/docs/benchmarks.md
begin='<!-- begin: heddle-bench summary bench/recorded -->'
end='<!-- end: heddle-bench summary -->'

grep -qxF "$begin" "$page" && grep -qxF "$end" "$page" ||
  { echo "bench-summary: $page lacks the markers '$begin' and '$end'" >&2; exit 1; }
table=$(mktemp)
trap 'rm -f "$table" "$table.page"' EXIT
"$bench" summary "$root/bench/recorded" >"$table"

case $mode in
  check)
    # The page's lines strictly between the markers.
    awk -v b="$begin" -v e="$end" '$0 == e { inside = 0 } inside { print } $0 == b { inside = 1 }' "$page" >"$table.page"
    if ! diff -u --label "docs/benchmarks.md (summary)" --label "heddle-bench summary bench/recorded" "$table.page" "$table"; then
      echo "bench-summary: docs/benchmarks.md's summary differs from the recorded results;" \
           "scripts/bench-summary.sh update build/bin/heddle-bench rewrites it" >&2
      exit 1
    fi
    echo "bench-summary: docs/benchmarks.md's summary is heddle-bench summary bench/recorded ($(grep -cE '\| [0-9]{4}-[0-9]{2}-[0-9]{2} \|' "$table") rows)"
    ;;
  update)
    awk -v b="$begin" -v e="$end" -v t="$table" '
      $0 == b { print; while ((getline line < t) > 0) print line; skip = 1; next }
      $0 == e { skip = 0 }
      !skip { print }' "$page" >"$table.page"
    cp "$table.page" "$page"
    echo "bench-summary: rewrote docs/benchmarks.md's summary from bench/recorded"
    ;;
  *) echo "usage: scripts/bench-summary.sh check|update HEDDLE_BENCH" >&2; exit 2 ;;
esac
