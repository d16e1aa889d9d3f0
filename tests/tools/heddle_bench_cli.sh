#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-bench as a user meets it: bad usage fails with a clear message and exit status 2, a good
# run writes a JSON report with its ratios, CSV tables and PNG plots.
#   tests/tools/heddle_bench_cli.sh BUILD_BIN_DIR PYTHON
set -uo pipefail
bin=${1:?usage: heddle_bench_cli.sh BUILD_BIN_DIR PYTHON}/heddle-bench
python=${2:?usage: heddle_bench_cli.sh BUILD_BIN_DIR PYTHON}
source "$(dirname "$0")/cli_support.sh"

# expect_exit STATUS "what" "message part" args...: that exit status and the message on stderr.
expect_exit() {
  local status=$1 what=$2 message=$3
  shift 3
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq $status ]] || fail "$what: exit status $rc, expected $status"
  grep -qi -- "$message" "$tmp/err" || fail "$what: stderr lacks '$message': $(cat "$tmp/err")"
}
# Bad usage: exit status 2. A failure while running (a bad file to summarise): 1.
expect_usage_error() { expect_exit 2 "$@"; }
expect_failure() { expect_exit 1 "$@"; }

expect_usage_error "unknown suite" "unknown suite 'nosuch'" nosuch --check
expect_usage_error "no suite" "which suite" --check
expect_usage_error "zero threads" "threads" spawn --check --threads 0
expect_usage_error "--quick with --full" "excludes" spawn --quick --full
expect_usage_error "--check with --quick" "excludes" spawn --check --quick
expect_usage_error "too few repetitions" "reps" spawn --reps 2
expect_usage_error "unwritable --json" "cannot write /dev/null/r.json" spawn --check --json /dev/null/r.json
# Each numeric option: a negative value, zero where it means nothing, past its range, no number.
# (CLI11 alone reads "--reps 010" as octal 8.)
for t in -1 0 1025 1,-2 2x 02 99999999999999999999; do
  expect_usage_error "--threads $t" "--threads: expected a whole number from 1 to 1024" spawn --check --threads "$t"
done
for r in -5 0 4 010 100001 five; do
  expect_usage_error "--reps $r" "--reps: expected a whole number from 5 to 100000, not '$r'" spawn --reps "$r"
done

# A good run: every result checked, JSON with machine, suites and the named ratios; CSV and PNG.
if ! "$bin" spawn --check --threads 1,2 --json "$tmp/r.json" --plot "$tmp/plots" >"$tmp/out" 2>"$tmp/err"; then
  fail "spawn --check --json --plot failed: $(cat "$tmp/err")"
else
  "$python" - "$tmp/r.json" <<'PY' || fail "the JSON report is not as documented"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["provenance"]
assert p["cores"] >= 1 and p["machine"].endswith(f"-{p['cores']}c"), p
for key in ("commit", "dirty", "compiler", "flags", "build_type", "cpu", "kernel", "date", "command", "scale"):
    assert key in p, key
assert set(p["versions"]) == {"onetbb", "openmpi", "fastjet", "hdf5"} and p["versions"]["onetbb"], p["versions"]
assert p["scale"] == "--check" and p["command"].startswith("heddle-bench spawn --check"), p
rows = r["suites"]["spawn"]["rows"]
assert {row["variant"] for row in rows} >= {"serial", "heddle", "oneTBB task_group"}, rows
for row in rows:
    assert row["min"] <= row["median"] <= row["max"] and len(row["samples"]) == 1, row
for name in ("fib_1t_vs_tbb", "fib_2t_vs_tbb", "spawn_ns_1t"):
    f = r["ratios"][name]
    assert isinstance(f["value"], float) and f["meaning"], (name, f)
# One round (--check): a figure compared round by round has no interval yet, and a target's
# verdict cannot be "met" on no spread.
f = r["ratios"]["fib_2t_vs_tbb"]
assert "lo" not in f and f["rounds"] == 1 and f["target"] == "<= 1" and f["verdict"] == "not shown", f
PY
  [[ -s $tmp/plots/spawn.csv ]] || fail "no spawn.csv"
  [[ -s $tmp/plots/spawn.png ]] || fail "no spawn.png"
fi

# The stats suite's overhead table becomes a CSV and one overhead plot per thread count.
if ! "$bin" stats --check --threads 1,2 --json "$tmp/s.json" --plot "$tmp/plots" >"$tmp/out" 2>"$tmp/err"; then
  fail "stats --check --plot failed: $(cat "$tmp/err")"
else
  for f in stats_overhead.csv stats_overhead_1t.png stats_overhead_2t.png; do
    [[ -s $tmp/plots/$f ]] || fail "no $f"
  done
  "$python" - "$tmp/s.json" <<'PY' || fail "the stats ratios are not as documented"
import json, sys
r = json.load(open(sys.argv[1]))["ratios"]
for dist in ("exp", "pareto"):
    for shape in ("loop", "tree"):
        for mean in ("250ns", "1us", "10us", "100us"):
            for peer in ("tbb", "omp"):
                for t in ("", "1t_", "2t_"):
                    assert f"stats_{dist}_{shape}_{mean}_{t}overhead_vs_{peer}" in r, (dist, shape, mean, t, peer)
PY
fi

# summary DIR: the recorded results as the docs' table; a missing folder, an empty one, a file that
# is not a recorded result: each named, exit status 1. --record with --check: usage error.
expect_usage_error "summary without a folder" "which folder" summary
expect_usage_error "--record with --check" "nothing to record" spawn --check --record "$tmp/rec"
expect_failure "summary of a missing folder" "$tmp/none is not a folder" summary "$tmp/none"
mkdir -p "$tmp/empty" "$tmp/bad"
expect_failure "summary of an empty folder" "no recorded results" summary "$tmp/empty"
echo '{"suites": {}}' >"$tmp/bad/x.json"
expect_failure "summary of a report without provenance" "$tmp/bad/x.json: not a recorded result" summary "$tmp/bad"
# A recorded report (the --check one, given a target's verdict by hand) becomes one row per target.
mkdir -p "$tmp/rec"
"$python" - "$tmp/r.json" "$tmp/rec/spawn.test-2c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["ratios"]["fib_2t_vs_tbb"].update(value=0.5, lo=0.4, hi=0.6, verdict="met")
json.dump(r, open(sys.argv[2], "w"))
PY
if ! "$bin" summary "$tmp/rec" >"$tmp/sum" 2>"$tmp/err"; then
  fail "summary of a recorded report failed: $(cat "$tmp/err")"
else
  grep -q '^| spawn | `fib_2t_vs_tbb` | 0.500 (0.400–0.600) | <= 1 | met | ' "$tmp/sum" || fail "summary row: $(cat "$tmp/sum")"
fi

# --trace FILE: a bad path fails before any run; a good one gets a trace of the runs' tasks.
expect_usage_error "unwritable --trace" "cannot open /dev/null/t.json" spawn --check --trace /dev/null/t.json
if ! "$bin" stats --check --threads 2 --trace "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"; then
  fail "stats --check --trace failed: $(cat "$tmp/err")"
else
  grep -q "trace: $tmp/t.json" "$tmp/err" || fail "--trace does not say where the trace went: $(cat "$tmp/err")"
  "$python" - "$tmp/t.json" <<'PY' || fail "the --trace file is not a trace of the runs"
import json, sys
d = json.load(open(sys.argv[1]))
tasks = [e for e in d["traceEvents"] if e["ph"] == "X" and e["cat"] == "task"]
workers = {e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert len(tasks) > 100, len(tasks)
assert "worker 0" in workers or any(w.endswith("worker 0") for w in workers), workers
assert d["otherData"]["dropped"] == 0
PY
fi

finish "heddle-bench CLI"
