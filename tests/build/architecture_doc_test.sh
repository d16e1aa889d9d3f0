#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/architecture.md against the table of the layers (tests/build/architecture_doc_test.cmake):
# the page passes, and copies of it with one fact changed fail, each naming what differs.
#   tests/build/architecture_doc_test.sh SOURCE_TREE
set -uo pipefail
root=${1:?usage: architecture_doc_test.sh SOURCE_TREE}
script=$root/tests/build/architecture_doc_test.cmake
page=$root/docs/architecture.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-architecture-doc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

cmake -DROOT="$root" -P "$script" >"$tmp/out" 2>&1 || fail "docs/architecture.md differs from cmake/layers.cmake: $(cat "$tmp/out")"

# expect_differs 'sed expression' 'what the message says': the page changed by the expression fails.
expect_differs() {
  local change=$1 says=$2
  sed -e "$change" "$page" >"$tmp/page.md"
  if cmp -s "$page" "$tmp/page.md"; then
    fail "'$change' changes nothing in docs/architecture.md"
    return
  fi
  if cmake -DROOT="$root" -DDOC="$tmp/page.md" -P "$script" >"$tmp/out" 2>&1; then
    fail "the page changed by '$change' passed"
    return
  fi
  grep -qF "$says" "$tmp/out" || fail "the message for '$change' lacks '$says': $(cat "$tmp/out")"
}
expect_differs '/^- `core\/detail\/trace.hpp`/d' \
  'core/detail/trace.hpp is offered by cmake/layers.cmake, but not listed by the page'
expect_differs 's/^- `core\/detail\/futex.hpp`/- `core\/detail\/futex.hpp`, `block_cache.hpp`/' \
  'core/detail/block_cache.hpp is listed by the page as offered, but cmake/layers.cmake does not offer it'
expect_differs 's/^| am | `heddle::am_detail` |/| am | `heddle::offload::detail` |/' \
  "the am layer's detail namespace is heddle::am_detail by cmake/layers.cmake, but heddle::offload::detail by the page"
expect_differs 's/^\(| fw | `heddle::fw`, `heddle-fw` |\) dispatch, async, core |/\1 dispatch, core |/' \
  "the fw layer uses 'dispatch, async, core' by cmake/layers.cmake, but 'dispatch, core' by the page"
expect_differs 's/, `include\/heddle\/algorithm\/` |/ |/' \
  "the core layer's folders are 'src/core/, include/heddle/core/, include/heddle/algorithm/' by cmake/layers.cmake"
expect_differs '/^| async (MPI) |/d' 'the layers'"'"' table has no row for the library heddle::mpi'
expect_differs 's/| nlohmann-json; the dynamic loader |/| the dynamic loader |/' \
  "do not name nlohmann-json, which the package finds for heddle::fw"
expect_differs '/^| dispatch | `heddle::dispatch_detail` |/d' "the namespaces' table has the rows 'core, async, am, fw'"

echo "$((failures == 0 ? 1 : 0)) passed, $failures failed"
[[ $failures -eq 0 ]]
