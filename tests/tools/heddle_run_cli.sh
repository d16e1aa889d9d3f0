#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-run as a user meets it: a bad command line fails with exit status 2 and names what is
# wrong, before any node starts; a good one starts the nodes with their environment, passes a
# node's failure on, --timeout ends a run that does not, and a SIGTERM reaches every node.
#   tests/tools/heddle_run_cli.sh HEDDLE_RUN
set -uo pipefail
bin=${1:?usage: heddle_run_cli.sh HEDDLE_RUN}
source "$(dirname "$0")/cli_support.sh"

# expect_usage_error "what" "message part" args...: exit status 2, the message on stderr, and no
# node started (the program would leave a file behind).
expect_usage_error() {
  local what=$1 message=$2
  shift 2
  timeout 60 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq 2 ]] || fail "$what: exit status $rc, expected 2 ($(head -c 300 "$tmp/err"))"
  grep -qF -- "$message" "$tmp/err" || fail "$what: stderr lacks '$message': $(cat "$tmp/err")"
  [[ ! -e $tmp/started ]] || fail "$what: a node started"
  rm -f "$tmp/started"
}
node=(touch "$tmp/started")

# Each numeric option: a negative value, zero where it means nothing, past its range, no number.
# (CLI11 alone reads "-n 010" as octal 8 and "--timeout nan" as no timeout.)
for n in -2 0 1025 two 010 99999999999999999999; do
  expect_usage_error "-n $n" "--nodes: expected a whole number from 1 to 1024, not '$n'" -n "$n" "${node[@]}"  # 010: not octal 8
done
for t in -1 nan inf 1e999 5s; do
  expect_usage_error "--timeout $t" "--timeout: expected a finite number, 0 or more, not '$t'" -n 1 --timeout "$t" "${node[@]}"
done
expect_usage_error "no -n" "--nodes is required" "${node[@]}"
expect_usage_error "no program" "no program given" -n 2
expect_usage_error "bad --backend" "--backend" -n 2 --backend carrier-pigeon "${node[@]}"
expect_usage_error "bad --bind" "--bind 300.1.2.3: not an IPv4 address" -n 2 --backend tcp --bind 300.1.2.3 "${node[@]}"

# A good run: every node once, with its number and the node count.
if ! timeout 60 "$bin" -n 10 --timeout 0 sh -c 'echo "$HEDDLE_NODE/$HEDDLE_NODES $HEDDLE_BACKEND"' >"$tmp/out" 2>"$tmp/err"; then
  fail "good run failed: $(cat "$tmp/err")"
else
  expected=$(for k in 0 1 2 3 4 5 6 7 8 9; do echo "$k/10 shm"; done)
  [[ $(sort -n "$tmp/out") == "$expected" ]] || fail "the nodes printed: $(cat "$tmp/out")"
fi

# A failing node: its status comes back, with a line naming the node.
timeout 60 "$bin" -n 2 sh -c 'exit $((HEDDLE_NODE * 3))' >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc -eq 3 ]] || fail "a node exiting 3: heddle-run's status $rc"
grep -qF "heddle-run: node 1 exited with status 3" "$tmp/err" || fail "the failed node is not named: $(cat "$tmp/err")"

# --timeout with a fraction: the nodes are killed, status 124.
timeout 60 "$bin" -n 2 --timeout 0.5 sleep 30 >"$tmp/out" 2>"$tmp/err"
rc=$?
[[ $rc -eq 124 ]] || fail "--timeout 0.5: status $rc, expected 124"
grep -qF "heddle-run: timeout after 0.5 s" "$tmp/err" || fail "--timeout 0.5: $(cat "$tmp/err")"

# SIGTERM to heddle-run goes on to every node (heddle-run waits for it, and for the nodes' ends, in
# sigtimedwait): the nodes end by it, and heddle-run reports each.
"$bin" -n 3 sh -c 'touch "$0.$HEDDLE_NODE"; exec sleep 30' "$tmp/up" >"$tmp/out" 2>"$tmp/err" &
runner=$!
for _ in $(seq 600); do  # until every node runs (heddle-run watches its signals before it starts them)
  [[ -e $tmp/up.0 && -e $tmp/up.1 && -e $tmp/up.2 ]] && break
  sleep 0.05
done
kill -TERM "$runner"
wait "$runner"
rc=$?
[[ $rc -eq 143 ]] || fail "SIGTERM: status $rc, expected 143 ($(cat "$tmp/err"))"
for k in 0 1 2; do
  grep -qF "heddle-run: node $k was killed by signal 15" "$tmp/err" || fail "SIGTERM: node $k: $(cat "$tmp/err")"
done

finish "heddle-run CLI"
