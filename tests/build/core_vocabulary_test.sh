#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The core knows nothing of the layers above it: its text (src/core/, include/heddle/core/ and the
# parallel algorithms, include/heddle/algorithm/, which the layering counts as the core's) names
# none of their concepts, comments included. A layer adds what it needs through the core's
# extension points (the trace recorder's kinds and process groups: docs/trace.md, "Adding kinds").
#   tests/build/core_vocabulary_test.sh SOURCE_TREE
#
# The words, whole words and case-insensitive, and why each:
#   module(s), event(s), lumi(s), luminosity, stream(s)   the framework's data model (fw); "event"
#       in Chrome's sense ("trace event", "trace-event", traceEvents) is the trace file's and allowed
#   fw, framework, fw::                                     the framework layer itself
#   dispatch, offload, active message(s), peer(s), am::     the dispatch and active-message layers
#   rank(s), mpirun, mpi, OMPI_*, PMI_*, PMIX_*, HEDDLE_NODE(S)   runs of several processes and their
#       launchers (am, heddle-run)
#   heddle-trace, heddle-run, heddle-fw                     the tools above the libraries
# Not in the list, on purpose: "async" and "message" (the core's own senses: an asynchronous
# operation is what a future stands for, an exception has a message), "node" (list and tree nodes),
# "queue" (the core's task queues), "heddle-bench" (the core's own benchmarks are cited as sources
# of its figures).
set -uo pipefail
root=${1:?usage: core_vocabulary_test.sh SOURCE_TREE}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-core-vocabulary.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

words='modules?|events?|lumis?|luminosity|streams?|fw|framework|dispatch|offload|active messages?|peers?|ranks?|mpirun|mpi|OMPI_[A-Z_]*|PMIX?_[A-Z_]*|HEDDLE_NODES?|heddle-trace|heddle-run|heddle-fw'
# Prints file:line: text for each use of a word in the core's files under TREE.
uses() {
  local tree=$1
  local dirs=()
  for d in src/core include/heddle/core include/heddle/algorithm; do [[ -d $tree/$d ]] && dirs+=("$tree/$d"); done
  ((${#dirs[@]})) || return 0
  grep -rnIE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.in' --include='CMakeLists.txt' '.' "${dirs[@]}" |
    sed -E 's/trace[- ]events?|traceEvents//Ig' |
    grep -iE "(^|[^A-Za-z0-9_-])($words)([^A-Za-z0-9_-]|$)|(^|[^A-Za-z0-9_])(fw|am)::" |
    sed "s|^$tree/||"
}

# The project's own core.
uses "$root" >"$tmp/found"
[[ -s $tmp/found ]] && fail "the core's files name the layers above it (reword generically, or move the concept to its layer):
$(cat "$tmp/found")"

# The check finds what it should, and leaves the allowed senses alone.
mkdir -p "$tmp/tree/src/core" "$tmp/tree/include/heddle/core/detail"
cat >"$tmp/tree/src/core/bad.cpp" <<'CPP'
// a module's label
int rank = 0;  // mpirun's OMPI_COMM_WORLD_RANK
auto x = heddle::fw::process::y;  // see heddle-trace
CPP
cat >"$tmp/tree/include/heddle/core/detail/good.hpp" <<'CPP'
// Chrome's trace-event JSON (traceEvents): a trace event per record; an eventfd; an async
// operation's message; a list node; modules_ is not the word (identifiers that contain it are kept)
int rankings = 0;
CPP
uses "$tmp/tree" >"$tmp/planted"
for expected in "src/core/bad.cpp:1:" "src/core/bad.cpp:2:" "src/core/bad.cpp:3:"; do
  grep -q "^$expected" "$tmp/planted" || fail "a planted use is not found: $expected (found: $(cat "$tmp/planted"))"
done
grep -q "good.hpp" "$tmp/planted" && fail "allowed senses are reported: $(grep good.hpp "$tmp/planted")"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "the core names none of the layers above it"
