#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-trace on traces the recorder wrote (not synthetic ones): a fib program under HEDDLE_TRACE
# and a heddle-fw run with --trace. Each is valid (schema, order, nesting, flows), its summary
# counts what the program did exactly, and its plots are drawn.
#   tests/tools/trace/real_traces.sh HEDDLE_TRACE_TOOL PYTHON TRACE_PROGRAM HEDDLE_FW FW_CONFIGS
set -uo pipefail
tool=${1:?usage: real_traces.sh HEDDLE_TRACE_TOOL PYTHON TRACE_PROGRAM HEDDLE_FW FW_CONFIGS}
python=${2:?}
program=${3:?}
fw=${4:?}
configs=${5:?}
source "$(dirname "$0")/../cli_support.sh"

check() {  # check NAME TRACE: valid, summarised as JSON, plotted
  local name=$1 trace=$2
  "$tool" validate "$trace" >"$tmp/$name.validate" 2>&1 || fail "$name: not valid: $(head -20 "$tmp/$name.validate")"
  "$tool" summary "$trace" --json "$tmp/$name.summary.json" >/dev/null 2>"$tmp/$name.err" || fail "$name: summary failed: $(cat "$tmp/$name.err")"
  "$tool" plot "$trace" --out "$tmp/$name.plots" >/dev/null 2>"$tmp/$name.err" || fail "$name: plot failed: $(cat "$tmp/$name.err")"
  [[ -s $tmp/$name.plots/timeline.png ]] || fail "$name: no timeline.png"
}

# fib(18) on the default runtime, every task named: F(19) - 1 = 4180 tasks "fib".
HEDDLE_TRACE="$tmp/fib.json" "$program" 18 >"$tmp/fib.out" || fail "the traced program failed"
[[ $(cat "$tmp/fib.out") == 2584 ]] || fail "fib(18) printed $(cat "$tmp/fib.out")"
check fib "$tmp/fib.json"
"$python" - "$tmp/fib.summary.json" <<'PY' || fail "fib: the summary does not count the program's tasks"
import json, sys
s = json.load(open(sys.argv[1]))
labels = {r["label"]: r["count"] for r in s["task_labels"]["rows"]}
assert labels.get("fib") == 4180, labels
assert s["dropped"]["total"] == 0, s["dropped"]
PY

# The framework's chain.json, 20 events in 2 lumis: each module's executions in the summary.
"$fw" "$configs/chain.json" --events 20 --events-per-lumi 10 --threads 2 -q --trace "$tmp/fw.json" >/dev/null 2>"$tmp/fw.err" ||
  fail "heddle-fw --trace failed: $(cat "$tmp/fw.err")"
[[ -s $tmp/fw.json ]] && check fw "$tmp/fw.json"
[[ -s $tmp/fw.plots/streams.png ]] || fail "fw: no streams.png"
"$python" - "$tmp/fw.summary.json" "$tmp/fw.json" <<'PY' || fail "fw: the summary does not count the run's modules"
import json, sys
s = json.load(open(sys.argv[1]))
events = json.load(open(sys.argv[2]))["traceEvents"]
executions = {}
for e in events:
    if e["ph"] == "X" and e.get("cat") == "module":
        executions[e["name"]] = executions.get(e["name"], 0) + 1
rows = {r["label"]: r["count"] for r in s["modules"]["rows"]}
assert s["modules"]["labels"] == len(executions), (s["modules"]["labels"], executions)
for label, count in rows.items():
    assert executions[label] == count, (label, count, executions[label])
assert sum(1 for e in events if e["ph"] == "X" and e.get("cat") == "event") == 20
stalls = {r["label"]: r["stalls"] for r in s["module_stalls"]["rows"]}
for label, count in stalls.items():
    assert executions[label] == count, (label, count)
PY

finish "heddle-trace on real traces"
