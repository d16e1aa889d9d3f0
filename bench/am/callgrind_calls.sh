#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The instructions of one small offload on each side, counted by callgrind (repeatable where times
# on this VM are not). Runs heddle-bench-am-calls under valgrind on both nodes of a shm or tcp
# session (heddle-run) or an mpi one (mpirun); each node's profile covers the N calls only. Prints
# per call:
#   caller: the call made and sent, waiting for it (the future, the poll loop's start and end, not
#           its idle turns), and the reply's delivery up to the caller's result;
#   target: the call's delivery, from the transport's hand-off to the reply sent (with the default
#           rule's held run, after the poll, included).
# What the transport spends finding a frame in its ring, socket or MPI queue is not in either
# figure (it is the same look, frame or not); the functions below the figures show where it goes.
# DUMP_INSTR=yes counts each instruction apart (callgrind's --dump-instr), for a look at a
# function's executed instructions beside objdump's listing.
#   [KEEP=1] [DUMP_INSTR=yes] bench/am/callgrind_calls.sh BUILD_DIR [CALLS] [shm|tcp|mpi] [empty|int|express|default|broadcast]
set -euo pipefail
build=${1:?usage: callgrind_calls.sh BUILD_DIR [CALLS] [BACKEND] [empty|int|express|default|broadcast]}
calls=${2:-2000}
backend=${3:-shm}
variant=${4:-empty}
out=$(mktemp -d)
# KEEP=1 keeps the profiles (their folder is printed) for callgrind_annotate.
if [ -n "${KEEP:-}" ]; then echo "profiles: $out"; else trap 'rm -rf "$out"' EXIT; fi
prog="$build/bin/heddle-bench-am-calls"
vg=(valgrind --tool=callgrind --dump-instr=${DUMP_INSTR:-no})
node_var=HEDDLE_NODE
[ "$backend" = mpi ] && node_var=OMPI_COMM_WORLD_RANK
vg+=("--callgrind-out-file=$out/cg.%q{$node_var}")
arg=()
[ "$variant" = empty ] || arg=("$variant")
if [ "$backend" = mpi ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np 2 "${vg[@]}" "$prog" "$calls" "${arg[@]}" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
else
  "$build/bin/heddle-run" -n 2 --backend "$backend" --timeout 900 \
    "${vg[@]}" "$prog" "$calls" "${arg[@]}" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
fi
# Inclusive instructions of the first function whose name matches a pattern, from an annotation.
incl() { awk -v pat="$2" '$0 ~ pat { v=$1; gsub(",", "", v); print v; exit }' "$1"; }
echo "## $backend, $variant, $calls calls: instructions per call"
for node in 0 1; do
  f="$out/cg.$node.1"
  [ -f "$f" ] || { echo "no profile of node $node in $out:"; ls "$out"; exit 1; }
  callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed 's/ (\s*[0-9.]*%)//' > "$f.txt"
done
c="$out/cg.0.1.txt" t="$out/cg.1.1.txt"
one=$(incl "$c" '(one_call|one_broadcast)\(') poll=$(incl "$c" 'poll_for_a_while') reply=$(incl "$c" 'engine::deliver\(')
target=$(incl "$t" 'engine::deliver\(') held=$(incl "$t" 'receiver::run_held_call\(')
target=$((target + ${held:-0}))
awk -v n="$calls" -v one="$one" -v poll="${poll:-0}" -v reply="${reply:-0}" -v target="$target" 'BEGIN {
  printf "caller %6.0f  (the call and its wait %.0f, the reply delivered %.0f)\n", (one - poll + reply) / n, (one - poll) / n, reply / n
  printf "target %6.0f\n", target / n }'
for node in 0 1; do
  echo "### node $node: inclusive per call"
  awk -v n="$calls" '{ v=$1; gsub(",", "", v); $1=""; sub(/^ +/, ""); sub(/ \[.*$/, ""); sub(/^\?\?\?:/, "");
      if ($0 ~ /heddle|memcpy|malloc|free|clock|now/ && v / n >= 5) printf "%8.0f  %s\n", v / n, substr($0, 1, 140) }' "$out/cg.$node.1.txt" | head -30
done
