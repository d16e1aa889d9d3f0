#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Failures across nodes, on shm and tcp: a node killed during a call (every call waiting on it
# fails within a second, the other nodes go on, heddle-run reports the killed node), and nodes
# built with different handler registries (both sides refuse, naming the other).
#   nodes_failures.sh HEDDLE_RUN NODES_TEST
set -u
run=$1 prog=$2
fails=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
pids=()
launch() {  # launch ARGS...: heddle-run ARGS into $out, its exit status into $status
  "$run" "$@" >"$out" 2>&1 &
  pids+=($!)
  wait $!
  status=$?
}
check() {  # check NAME PATTERN: the output must contain PATTERN
  if grep -q -- "$2" "$out"; then echo "ok: $1"; else echo "FAILED: $1: no '$2' in:"; cat "$out"; fails=$((fails + 1)); fi
}
for backend in shm tcp; do
  for n in 2 3; do
    # A sync's caller polls for its reply for 5 s at 2 nodes (it sees the loss itself), for the
    # default 200 µs at 3 (its call then waits in the pending table).
    spin=$([ $n = 2 ] && echo 5000 || echo "")
    HEDDLE_TEST_CALLER_SPIN_MS=$spin launch -n $n --backend $backend --timeout 120 "$prog" --gtest_filter=PeerDeath.*
    check "$backend/$n: the killed node's calls fail" "\[  PASSED  \] 1 test"
    check "$backend/$n: heddle-run names the killed node" "node $((n - 1)) was killed by signal 9"
    [ $status -eq 137 ] && echo "ok: $backend/$n: status 137" || { echo "FAILED: $backend/$n: status $status, 137 expected"; fails=$((fails + 1)); }
  done
  HEDDLE_TEST_EXTRA_HANDLER=1 launch -n 2 --backend $backend --timeout 120 "$prog"
  check "$backend: node 0 refuses a node with another registry" "node 1 (pid [0-9]*) was built with a different set of handlers"
  check "$backend: node 1 refuses node 0 likewise" "node 0 (pid [0-9]*) was built with a different set of handlers"
  [ $status -eq 2 ] && echo "ok: $backend: mismatch exits 2" || { echo "FAILED: $backend: a registry mismatch exited $status, 2 expected"; fails=$((fails + 1)); }
done
# The sessions heddle-run started here are named r<its pid>-...; other tests' sessions may be live.
ours="^heddle\.r($(IFS='|'; echo "${pids[*]}"))-"
left=$(ls /dev/shm | grep -E "$ours" || true)
[ -z "$left" ] || { echo "FAILED: shared-memory objects left behind:"; echo "$left"; fails=$((fails + 1)); }
echo "$fails failed"
[ $fails -eq 0 ]
