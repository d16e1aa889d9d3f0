#!/usr/bin/env bash
# [[nodiscard]] as a user meets it: dropping a future, a source, a token or a remote buffer handle is
# a compiler warning (an error here, with -Werror=unused-result), and (void) says it is meant.
#   tests/build/nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR   (the build's include/: build_config.hpp)
set -uo pipefail
cxx=${1:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
inc=${2:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
gen=${3:?usage: nodiscard_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-nodiscard.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0

# compiles WHAT 'statements': the statements inside a function must compile without a warning.
# warns WHAT 'statements': they must draw the unused-result warning.
check() {
  local expect=$1 what=$2 body=$3
  checks=$((checks + 1))
  cat >"$tmp/t.cpp" <<CPP
#include <heddle/heddle.hpp>
#include <heddle/am.hpp>
#include <chrono>
using namespace std::chrono_literals;
void f(heddle::runtime& rt, heddle::serial_queue& q, heddle::task_group& g) {
  (void)rt; (void)q; (void)g;
  $body
}
CPP
  "$cxx" -std=c++20 -fsyntax-only -Werror=unused-result -I"$inc" -I"$gen" "$tmp/t.cpp" >"$tmp/out" 2>&1
  local rc=$?
  if [[ $expect == warns ]]; then
    if [[ $rc -eq 0 ]] || ! grep -q "nodiscard" "$tmp/out"; then
      echo "FAIL: $what: no nodiscard warning" >&2
      head -5 "$tmp/out" >&2
      failures=$((failures + 1))
    fi
  elif [[ $rc -ne 0 ]]; then
    echo "FAIL: $what: does not compile cleanly: $(head -5 "$tmp/out")" >&2
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

echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
