#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The layer check (cmake/check_layer_includes.cmake) on trees made here: the real tree passes, and
# each kind of bad include, and a file opening another layer's detail namespace (each layer's, as the
# table of the layers, cmake/layers.cmake, names it, and spelled nested or qualified), fails the
# check with its file, line and reason.
#   tests/build/layer_check_test.sh SOURCE_TREE
set -uo pipefail
root=${1:?usage: layer_check_test.sh SOURCE_TREE}
script=$root/cmake/check_layer_includes.cmake
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-layer-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The layers, from the table.
read -ra layers <<<"$(cmake -DPRINT=HEDDLE_LAYERS -P "$root/cmake/layers.cmake")"
[[ ${#layers[@]} -ge 5 ]] || fail "cmake/layers.cmake names ${#layers[@]} layers: ${layers[*]}"

# The project's own tree: every layer passes.
for layer in "${layers[@]}"; do
  cmake -DLAYER="$layer" -DROOT="$root" -P "$script" >"$tmp/out" 2>&1 || fail "the $layer layer of the source tree: $(cat "$tmp/out")"
done

# expect_refused LAYER FILE 'lines to add' 'reason in the message' [what the message says the line
# does] [the refused line's number]: the lines follow two of their own (the third line by default).
expect_refused() {
  local layer=$1 file=$2 line=$3 reason=$4 does=${5:-includes} number=${6:-3}
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree/src/$layer" "$tmp/tree/include/heddle/$layer" "$(dirname "$tmp/tree/$file")"
  printf '// a file\n#include <vector>\n%s\n' "$line" >"$tmp/tree/$file"
  if cmake -DLAYER="$layer" -DROOT="$tmp/tree" -P "$script" >"$tmp/out" 2>&1; then
    fail "$layer: '$line' in $file was accepted"
    return
  fi
  grep -qF "$file:$number: $does" "$tmp/out" || fail "$layer: the message does not name $file:$number: $(cat "$tmp/out")"
  grep -qF "$reason" "$tmp/out" || fail "$layer: the message for '$line' lacks '$reason': $(cat "$tmp/out")"
}
expect_refused core src/core/a.cpp '#include "heddle/async/io.hpp"' "the async layer is not below the core layer"
expect_refused async src/async/a.cpp '#include <heddle/dispatch/group.hpp>' "the dispatch layer is not below the async layer"
expect_refused dispatch include/heddle/dispatch/a.hpp '#include "heddle/fw/process.hpp"' "the fw layer is not below the dispatch layer"
expect_refused fw src/fw/a.cpp '#include "../core/runtime_core.hpp"' "a private header must be in the including file's own folder"
expect_refused fw src/fw/a.cpp '#include "missing.hpp"' "a private header must be in the including file's own folder"
expect_refused fw src/fw/a.cpp '#include "heddle/core/detail/block_cache.hpp"' "a private header of the core layer"
expect_refused fw src/fw/a.cpp '#include "heddle/dispatch/detail/queue_state.hpp"' "a private header of the dispatch layer"
expect_refused am src/am/a.cpp '#include "heddle/dispatch/serial_queue.hpp"' "the dispatch layer is not below the am layer"
expect_refused core src/core/a.cpp '#include "heddle/heddle.hpp"' "heddle.hpp includes layers that are not below the core layer"
# The algorithms are the core's (heddle_layer_core_folders in cmake/layers.cmake): an algorithm may
# not use the async layer, and the async layer sees them as the core's public headers.
expect_refused core include/heddle/algorithm/a.hpp '#include "heddle/async/timer.hpp"' "the async layer is not below the core layer"
expect_refused core include/heddle/algorithm/detail/a.hpp '#include <heddle/dispatch.hpp>' "the dispatch layer is not below the core layer"
expect_refused async src/async/a.cpp '#include "heddle/algorithm/detail/run.hpp"' "a private header of the core layer"
expect_refused async src/async/a.cpp 'namespace heddle::core_detail {' \
  "opens namespace heddle::core_detail: the detail namespace of the core layer, not of the async layer" opens
expect_refused fw include/heddle/fw/a.hpp '  namespace dispatch_detail {' "the detail namespace of the dispatch layer" opens
expect_refused core src/core/a.cpp 'namespace heddle::am_detail {' "the detail namespace of the am layer" opens
expect_refused dispatch src/dispatch/a.cpp 'namespace heddle::detail {' "no layer's" opens
# A line with a non-ASCII character before the bad one does not shift its number.
expect_refused core src/core/a.cpp $'// 20 \xc2\xb5s \xe2\x80\x94 a comment\n#include "heddle/fw/event.hpp"' "the fw layer is not below the core layer" includes 4
# Every layer's detail namespace, as the table spells it, is refused in every other layer's files.
for owner in "${layers[@]}"; do
  ns=$(cmake -DPRINT="heddle_layer_${owner}_namespace" -P "$root/cmake/layers.cmake")
  [[ $ns == heddle::* ]] || fail "cmake/layers.cmake gives the $owner layer the detail namespace '$ns'"
  for layer in "${layers[@]}"; do
    [[ $layer == "$owner" ]] && continue
    expect_refused "$layer" "src/$layer/a.cpp" "namespace $ns {" "the detail namespace of the $owner layer, not of the $layer layer" opens
  done
done
# The other spellings: nested in an enclosing namespace, relative to one, or a namespace inside
# another layer's detail namespace.
expect_refused core src/core/a.cpp $'namespace heddle {\nnamespace am_detail {' \
  "opens namespace am_detail (as heddle::am_detail): the detail namespace of the am layer" opens 4
expect_refused dispatch include/heddle/dispatch/a.hpp $'namespace heddle {\nnamespace fw_detail {\n  namespace trace_kinds {' \
  "(as heddle::fw_detail::trace_kinds): the detail namespace of the fw layer" opens 5
expect_refused core src/core/a.cpp $'namespace heddle {\nnamespace am_detail::trace_kinds {' "the detail namespace of the am layer" opens 4
expect_refused async src/async/a.cpp 'namespace heddle::core_detail::trace {' "the detail namespace of the core layer" opens
expect_refused am src/am/a.cpp $'namespace heddle {\nnamespace detail {' "(as heddle::detail): no layer's" opens 4
# Closing a namespace (by its closing comment) ends what was opened in it.
expect_refused fw src/fw/a.cpp $'namespace heddle::offload {\n}  // namespace heddle::offload\nnamespace heddle {\nnamespace core_detail {' \
  "(as heddle::core_detail): the detail namespace of the core layer" opens 6

# What is allowed: a lower layer's public header and a detail header it offers, the own layer's
# detail, a private header beside the file; the own layer's detail namespace, and the words of
# another's in a comment that closes a namespace.
rm -rf "$tmp/tree"
mkdir -p "$tmp/tree/src/fw" "$tmp/tree/include/heddle/fw/detail"
touch "$tmp/tree/src/fw/own.hpp"
printf '#include "heddle/core/future.hpp"\n#include "heddle/algorithm/parallel_for.hpp"\n#include <heddle/algorithm.hpp>\n#include "heddle/core/detail/completion_hook.hpp"\n#include "heddle/fw/detail/x.hpp"\n#include "own.hpp"\n#include <heddle/dispatch.hpp>\nnamespace heddle::fw_detail {\n}  // namespace heddle::core_detail\n' >"$tmp/tree/src/fw/a.cpp"
# ... and its own detail namespace spelled nested, after another layer's public one was closed; an
# alias of another layer's detail namespace; a namespace opened and closed on one line.
printf 'namespace heddle::offload {\n}  // namespace heddle::offload\nnamespace heddle {\nnamespace fw_detail {\nnamespace x {}\n}  // namespace fw_detail\n}  // namespace heddle\nnamespace od = heddle::am_detail;\n' >"$tmp/tree/src/fw/b.cpp"
cmake -DLAYER=fw -DROOT="$tmp/tree" -P "$script" >"$tmp/out" 2>&1 || fail "allowed includes were refused: $(cat "$tmp/out")"

echo "$((failures == 0 ? 1 : 0)) passed, $failures failed"
[[ $failures -eq 0 ]]
