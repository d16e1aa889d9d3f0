#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# [[nodiscard]] as a user meets it: dropping a future, a source, a token or a remote buffer handle is
# a compiler warning (an error here, with -Werror=unused-result), and (void) says it is meant.
#   tests/build/nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR   (the build's include/: build_config.hpp)
set -uo pipefail
cxx=${1:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
inc=${2:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
gen=${3:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-nodiscard.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0

# compiles WHAT 'statements': the statements inside a function must compile without a warning.
# warns WHAT 'statements': they must draw the unused-result warning.
# Every check is a function of one file, its statements on one line, and the file is compiled once:
# each diagnostic names its line, and so its check.
checks=()
kinds=()
bodies=()
check() {
  kinds+=("$1")
  checks+=("$2")
  bodies+=("$3")
}
run_checks() {
  local file=$tmp/t.cpp i line
  local -A line_of=()
  cat >"$file" <<CPP
#include <heddle/heddle.hpp>
#include <heddle/am.hpp>
#include <chrono>
using namespace std::chrono_literals;
CPP
  line=$(wc -l <"$file")
  for i in "${!checks[@]}"; do
    printf 'void check_%d(heddle::runtime& rt, heddle::serial_queue& q, heddle::task_group& g) {\n  (void)rt; (void)q; (void)g; %s\n}\n' \
      "$i" "${bodies[$i]}" >>"$file"
    line_of[$i]=$((line + 2))
    line=$((line + 3))
  done
  "$cxx" -std=c++20 -fsyntax-only -Werror=unused-result -I"$inc" -I"$gen" "$file" >"$tmp/out" 2>&1
  # Diagnostics of the file itself: "t.cpp:LINE:COLUMN: error: ..." (notes are not counted).
  grep -E "^$file:[0-9]+:[0-9]+: (error|warning):" "$tmp/out" >"$tmp/diagnostics"
  local accounted=0
  for i in "${!checks[@]}"; do
    local here
    here=$(grep -E "^$file:${line_of[$i]}:" "$tmp/diagnostics")
    accounted=$((accounted + $(grep -c . <<<"$here")))
    if [[ ${kinds[$i]} == warns ]]; then
      if ! grep -q nodiscard <<<"$here"; then
        echo "FAIL: ${checks[$i]}: no nodiscard warning" >&2
        failures=$((failures + 1))
      fi
    elif [[ -n $here ]]; then
      echo "FAIL: ${checks[$i]}: does not compile cleanly: $(head -3 <<<"$here")" >&2
      failures=$((failures + 1))
    fi
  done
  # Anything else (an error in a header, a diagnostic on no check's line) fails the test.
  if [[ $(grep -c . "$tmp/diagnostics") -ne $accounted ]] || grep -qE '^[^ ]+:[0-9]+:[0-9]+: (fatal )?error:' <(grep -v "^$file:" "$tmp/out"); then
    echo "FAIL: the checks' file has diagnostics outside the checks:" >&2
    head -20 "$tmp/out" >&2
    failures=$((failures + 1))
  fi
}

check warns "a dropped timer" 'heddle::sleep_for(rt, 1ms);'
check warns "a dropped task" 'rt.task([] { return 1; });'
check warns "a dropped continuation" 'rt.task([] { return 1; }).then([](int v) { return v; });'
check warns "a dropped readiness wait" 'heddle::io::readable(rt, 0);'
check warns "a dropped source" 'heddle::source::read(0, q, [] {});'
check warns "a dropped token" 'g.token();'
check warns "a dropped remote buffer" 'heddle::offload::allocate<int>(1, 4);'
check warns "a dropped unwrapping continuation" 'rt.task([] { return 1; }).then([](int v) { return heddle::make_ready_future(v); });'
check warns "a dropped shared future" 'rt.task([] { return 1; }).share();'
check warns "a dropped shared successor" 'auto s = rt.task([] { return 1; }).share(); s.then([](int v) { return v; });'
check warns "a dropped when_any" 'heddle::when_any(std::vector<heddle::future<int>>{});'
check warns "a dropped when_all_ready" 'heddle::when_all_ready(std::vector<heddle::future<int>>{});'
check warns "a dropped ready future" 'heddle::make_ready_future(1);'
check warns "a dropped exceptional future" 'heddle::make_exceptional_future<int>(std::exception_ptr{});'
check compiles "(void) on a timer" '(void)heddle::sleep_for(rt, 1ms);'
check compiles "a kept future" 'auto f = heddle::sleep_for(rt, 1ms); f.get();'

run_checks
echo "$((${#checks[@]} - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
