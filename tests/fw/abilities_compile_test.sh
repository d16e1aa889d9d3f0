#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Module kinds and their abilities as a module's author meets them (abilities.hpp): what is right
# compiles, and what is wrong does not, stopping at a first error that says why. ExternalWork
# without an acquire is refused where the module is added or registered; an acquire override
# without ExternalWork has nothing to override; a type that is no ability, an ability listed twice
# and an ability the kind does not take are refused by the kind.
#   tests/fw/abilities_compile_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR   (the build's include/: build_config.hpp)
set -uo pipefail
cxx=${1:?usage: abilities_compile_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
inc=${2:?usage: abilities_compile_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
gen=${3:?usage: abilities_compile_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-abilities.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# check compiles WHAT 'code': the code, at namespace scope after the header, compiles without a warning.
# check refused WHAT 'code' TEXT...: it does not, and the first error (with its line, where that is
# the check's code) contains every TEXT.
# One file per check, so that no error hides another; run_checks compiles them side by side.
expects=() whats=() texts=()
check() {
  local i=${#expects[@]}
  expects+=("$1")
  whats+=("$2")
  cat >"$tmp/$i.cpp" <<CPP
#include <heddle/core/ready_future.hpp>
#include <heddle/fw/global.hpp>
#include <heddle/fw/one.hpp>
#include <heddle/fw/process.hpp>
#include <heddle/fw/registry.hpp>
#include <heddle/fw/stream.hpp>
using namespace heddle::fw;
// A test ability that only global:: kinds take (the extension point of abilities.hpp).
struct GlobalOnly {};
template <class Base>
class global_only_layer : public Base {};
template <>
struct heddle::fw_detail::ability<GlobalOnly> {
  static constexpr bool allowed(module_kind k) noexcept { return k == module_kind::global; }
  template <class Base, module_kind>
  using layer = global_only_layer<Base>;
};
$3
CPP
  shift 3
  local IFS=$'\x1f'
  texts+=("$*")
}
run_checks() {
  local i pids=() first text
  for i in "${!expects[@]}"; do
    "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$inc" -I"$gen" "$tmp/$i.cpp" >"$tmp/$i.out" 2>&1 &
    pids+=($!)
  done
  for i in "${!expects[@]}"; do
    wait "${pids[$i]}"
    local rc=$?
    first=$(grep -m1 "error" "$tmp/$i.out")
    # An error in the check's own code: its line too (clang's "only virtual member functions can be
    # marked 'override'" names no function; the line it points to does).
    if [[ $first == "$tmp/$i.cpp:"* ]]; then
      local at=${first#"$tmp/$i.cpp:"}
      first+=" [line: $(sed -n "${at%%:*}p" "$tmp/$i.cpp")]"
    fi
    if [[ ${expects[$i]} == compiles ]]; then
      [[ $rc -eq 0 ]] || fail "${whats[$i]}: does not compile: $(grep -m3 error "$tmp/$i.out")"
    elif [[ $rc -eq 0 ]]; then
      fail "${whats[$i]}: compiled"
    else
      local wanted
      IFS=$'\x1f' read -r -a wanted <<<"${texts[$i]}"
      for text in "${wanted[@]}"; do
        grep -qF -- "$text" <<<"$first" || fail "${whats[$i]}: the first error does not say '$text': $first"
      done
    fi
  done
}

# The modules of the checks: an ExternalWork producer of each kind with acquire in either
# spelling, or none (ACQUIRE empty); a producer without the ability.
handle_global='void acquire(const event&, const event_setup&, async_handle h) const override { h.done(); }'
future_stream='heddle::future<void> acquire(const event&, const event_setup&) override {
    return heddle::make_ready_future();
  }'
handle_one='void acquire(const event&, const event_setup&, async_handle h) override { h.done(); }'
module() {  # module NAME BASE CONST ACQUIRE
  cat <<CPP
struct $1 final : $2 {
  $4
  void produce(event&, const event_setup&) $3 override {}
  $1() = default;
  explicit $1(const parameter_set&) {}
};
CPP
}

check compiles "ExternalWork with acquire, in each spelling and kind, added and registered" "
$(module a 'global::EDProducer<ExternalWork>' const "$handle_global")
$(module b 'stream::EDProducer<ExternalWork>' '' "$future_stream")
$(module c 'one::EDProducer<ExternalWork>' '' "$handle_one")
$(module d 'global::EDProducer<>' const '')
$(module e 'global::EDProducer<GlobalOnly, ExternalWork>' const "$handle_global")
void add(process& p) { p.add<a>({\"a\"}); p.add<b>({\"b\"}); p.add<c>({\"c\"}); p.add<d>({\"d\"}); p.add<e>({\"e\"}); }
HEDDLE_FW_MODULE(a);
HEDDLE_FW_MODULE(b);"
check refused "ExternalWork without acquire, added" "$(module m 'stream::EDProducer<ExternalWork>' '' '')
void add(process& p) { p.add<m>({\"m\"}); }" "ExternalWork" "overrides no acquire"
check refused "ExternalWork without acquire, registered" "$(module m 'global::EDProducer<ExternalWork>' const '')
HEDDLE_FW_MODULE(m);" "ExternalWork" "overrides no acquire"
check refused "an acquire override without ExternalWork" "$(module m 'global::EDProducer<>' const "$handle_global")" \
  "acquire" "override"
check refused "an acquire override without ExternalWork (stream::)" \
  "$(module m 'stream::EDProducer<>' '' "$future_stream")" "acquire" "override"
check refused "a type that is no ability" "$(module m 'one::EDProducer<int>' '' '')
m instance;" "are abilities"
check refused "an ability listed twice" \
  "$(module m 'global::EDProducer<ExternalWork, ExternalWork>' const "$handle_global")
m instance;" "listed twice"
check refused "an ability the kind does not take" "$(module m 'stream::EDProducer<GlobalOnly>' '' '')
m instance;" "does not take"

run_checks
echo "$((${#expects[@]} - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
