#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Active messages in traces: a two-node run under heddle-run --trace (shared memory) and, where MPI
# is, a two-rank run under mpirun with HEDDLE_TRACE (gathered by rank 0 at its exit; without
# heddle-trace to gather them, the ranks' files stay and merge by hand). The merged
# trace has both processes' tracks, is valid, and every message is a send, a receipt and a flow
# from one to the other: node 0's 20 calls to node 1 (and their replies) and 20 pings counted.
#   tests/am/trace_test.sh HEDDLE_RUN HEDDLE_TRACE_TOOL PYTHON PROGRAM [MPIRUN]
set -uo pipefail
run=${1:?usage: trace_test.sh HEDDLE_RUN HEDDLE_TRACE_TOOL PYTHON PROGRAM [MPIRUN]}
tool=${2:?}
python=${3:?}
program=${4:?}
mpirun=${5:-}
source "$(dirname "$0")/../tools/cli_support.sh"

check() {  # check WHAT MERGED_TRACE
  local what=$1 trace=$2
  "$tool" validate "$trace" >"$tmp/validate" 2>&1 || fail "$what: the merged trace is not valid: $(head -20 "$tmp/validate")"
  "$python" - "$trace" <<'PY' || fail "$what: the merged trace does not hold the run's messages"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
assert len(procs) == 2, procs
assert any(n.endswith("node 0") for n in procs.values()) and any(n.endswith("node 1") for n in procs.values()), procs
node_of = {pid: int(n.rsplit(" ", 1)[1]) for pid, n in procs.items()}
sends = [e for e in ev if e["ph"] == "X" and e["cat"] == "am" and e["name"] == "send"]
receipts = [e for e in ev if e["ph"] == "X" and e["cat"] == "am" and e["name"] == "receive"]
def count(es, kind, node, key, peer):
    return sum(1 for e in es if e["args"]["kind"] == kind and node_of[e["pid"]] == node and e["args"][key] == peer)
assert count(sends, "call", 0, "to", 1) >= 20, count(sends, "call", 0, "to", 1)  # 20 where_am_i, and counted()
assert count(sends, "post", 0, "to", 1) == 20, count(sends, "post", 0, "to", 1)
assert count(receipts, "post", 1, "from", 0) == 20
assert count(receipts, "call", 1, "from", 0) == count(sends, "call", 0, "to", 1)
assert count(sends, "reply_value", 1, "to", 0) == count(sends, "call", 0, "to", 1)
starts = {e["id"]: e for e in ev if e["ph"] == "s" and e["name"] == "message"}
ends = {e["id"]: e for e in ev if e["ph"] == "f" and e["name"] == "message"}
assert len(starts) == len(sends) == len(ends) == len(receipts), (len(starts), len(sends), len(ends), len(receipts))
crossing = sum(1 for i, s in starts.items() if s["pid"] != ends[i]["pid"])
assert crossing == len(starts), (crossing, len(starts))
for i, s in starts.items():
    assert s["ts"] <= ends[i]["ts"], (s, ends[i])
handlers = [e for e in ev if e["ph"] == "X" and e["cat"] == "task" and "where_am_i" in e["name"]]
assert len(handlers) == 20, len(handlers)
# Node 1 measured its clock against node 0's as its session started; on one host the true offset
# is 0, and node 0's reply time lies within the probe's round trip: |offset| <= half of it.
p1 = [p for p in d["otherData"]["processes"] if p["node"] == 1][0]
assert p1["clock_measured"], p1
assert abs(p1["clock_offset_us"]) <= p1["clock_uncertainty_us"] + 0.001, p1
assert sum(1 for e in sends if e["args"]["kind"] == "clock_probe" and node_of[e["pid"]] == 1) >= 1
PY
}

out=$("$run" -n 2 --backend shm --timeout 120 --trace "$tmp/shm.json" "$program" 20 2>"$tmp/err")
[[ $? -eq 0 && $out == *ok* ]] || fail "heddle-run --trace: $(cat "$tmp/err") $out"
ls "$tmp"/shm.json.node*.json >/dev/null 2>&1 && fail "heddle-run --trace left the nodes' files"
[[ -s $tmp/shm.json ]] && check "heddle-run --trace (shm)" "$tmp/shm.json"

if [[ -n $mpirun ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
         OMPI_MCA_rmaps_base_oversubscribe=1
  # The ranks' traces are gathered into FILE by rank 0 at its exit, with the heddle-trace in PATH.
  tool_dir=$(cd "$(dirname "$tool")" && pwd)
  out=$(PATH="$tool_dir:$PATH" HEDDLE_TRACE="$tmp/mpi.json" timeout 120 "$mpirun" -np 2 "$program" 20 2>"$tmp/err")
  [[ $? -eq 0 && $out == ok ]] || fail "mpirun with HEDDLE_TRACE (the program's output alone expected): $(cat "$tmp/err") $out"
  ls "$tmp"/mpi.json.rank* >/dev/null 2>&1 && fail "mpirun with HEDDLE_TRACE left the ranks' files: $(ls "$tmp") $(cat "$tmp/err")"
  [[ -s $tmp/mpi.json ]] && check "mpirun (mpi)" "$tmp/mpi.json" || fail "mpirun with HEDDLE_TRACE gathered no $tmp/mpi.json: $(cat "$tmp/err")"
  # Without heddle-trace to merge them, the ranks' traces stay, rank 0 says how to merge them, and
  # merging them by hand gives the same trace.
  out=$(PATH=/usr/bin:/bin HEDDLE_TRACE="$tmp/kept.json" timeout 120 "$mpirun" -np 2 "$program" 20 2>"$tmp/err")
  rc=$?
  if [[ ! -x /usr/local/bin/heddle-trace ]]; then  # the installed one, which rank 0 would use
    [[ $rc -eq 0 && $out == *ok* ]] || fail "mpirun with HEDDLE_TRACE, no heddle-trace: $(cat "$tmp/err") $out"
    [[ -s $tmp/kept.json.rank0.json && -s $tmp/kept.json.rank1.json ]] || fail "without heddle-trace, the ranks' files did not stay: $(ls "$tmp")"
    grep -q "heddle-trace merge FILE FILE.rank\*.json" "$tmp/err" || fail "without heddle-trace, rank 0 did not say how to merge: $(cat "$tmp/err")"
    ls "$tmp"/kept.json.rank*.done >/dev/null 2>&1 && fail "without heddle-trace, the ranks' marks stayed"
    "$tool" merge "$tmp/kept.json" "$tmp/kept.json.rank0.json" "$tmp/kept.json.rank1.json" >"$tmp/merge" 2>&1 ||
      fail "heddle-trace merge: $(cat "$tmp/merge")"
    [[ -s $tmp/kept.json ]] && check "mpirun (mpi), merged by hand" "$tmp/kept.json"
  fi
else
  echo "(no MPI here: the mpirun part is skipped)"
fi

finish "active messages in traces"
