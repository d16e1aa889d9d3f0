#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle::f2f<&fn>(args...) as a user meets it: what it accepts compiles, and what it refuses stops at
# a static_assert whose message names heddle::f2f (not at an incomplete type deep in the header). And
# no public header defines a lowercase macro, which f2f was until it became a function template.
#   tests/build/f2f_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR   (the build's include/: build_config.hpp)
set -uo pipefail
cxx=${1:?usage: f2f_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
inc=${2:?usage: f2f_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
gen=${3:?usage: f2f_test.sh CXX INCLUDE_DIR GENERATED_INCLUDE_DIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-f2f.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# check compiles WHAT 'expression': the expression, made a functor, must compile.
# check refused WHAT 'expression' 'text': it must not, and the first error must contain the text.
# One file per check: GCC 12 reuses an f2f specialisation across template arguments of different
# function-pointer types that point to the same function, so checks in one file would mask each other.
# The headers every check file opens with are precompiled once (prelude.hpp.gch, which the compiler
# reads in place of prelude.hpp as the file's first include: the same declarations, parsed once
# instead of once a check: 1.8 s of CPU a check without, 0.4 s with). A compiler that cannot use it
# (not GCC, or a header that changed since) reads prelude.hpp itself: the checks stay the same.
cat >"$tmp/prelude.hpp" <<'CPP'
#include <heddle/am/functor.hpp>
#include <string>
CPP
"$cxx" -std=c++20 -x c++-header -I"$inc" -I"$gen" "$tmp/prelude.hpp" -o "$tmp/prelude.hpp.gch" >"$tmp/out" 2>&1 ||
  { cat "$tmp/out" >&2; fail "the checks' headers do not compile"; }
check() {
  local expect=$1 what=$2 expr=$3 text=${4:-}
  checks=$((checks + 1))
  cat >"$tmp/t.cpp" <<CPP
#include "prelude.hpp"
namespace user {
int scale(int a, std::string s) { return a * static_cast<int>(s.size()); }
int twice(int a) { return 2 * a; }
double twice(double a) { return 2 * a; }
int negate(int a) noexcept { return -a; }
int by_pointer(const int* p) { return *p; }
void by_reference(std::string& s) { s += "!"; }
const std::string& returns_reference(int) { static std::string s; return s; }
struct widget { int size(int) const { return 1; } };
}  // namespace user
void use() {
  int n = 1; std::string s = "x"; (void)n; (void)s;
  auto call = $expr;
  (void)call;
}
CPP
  "$cxx" -std=c++20 -fsyntax-only -I"$inc" -I"$gen" "$tmp/t.cpp" >"$tmp/out" 2>&1
  local rc=$?
  if [[ $expect == compiles ]]; then
    [[ $rc -eq 0 ]] || fail "$what: does not compile: $(grep -m3 error "$tmp/out")"
  elif [[ $rc -eq 0 ]]; then
    fail "$what: compiled"
  elif ! grep -m1 "error" "$tmp/out" | grep -qF "$text"; then
    fail "$what: the first error does not say '$text': $(grep -m1 error "$tmp/out")"
  fi
}

check compiles "a function" 'heddle::f2f<&user::scale>(1, std::string("x"))'
check compiles "a function without &" 'heddle::f2f<user::scale>(n, s)'
check compiles "an overload named by its type" 'heddle::f2f<static_cast<int (*)(int)>(&user::twice)>(1)'
check compiles "a noexcept function named as a plain pointer" 'heddle::f2f<static_cast<int (*)(int)>(&user::negate)>(1)'
check refused "a pointer parameter" 'heddle::f2f<&user::by_pointer>(&n)' "heddle::f2f: a function called remotely takes its parameters by value or const reference"
check refused "a non-const reference parameter" 'heddle::f2f<&user::by_reference>(s)' "heddle::f2f: a function called remotely takes its parameters by value or const reference"
check refused "a reference result" 'heddle::f2f<&user::returns_reference>(1)' "heddle::f2f: a function called remotely returns a value"
check refused "a member function" 'heddle::f2f<&user::widget::size>(1)' "heddle::f2f<Fn>: Fn is the address of a non-member function"
check refused "a noexcept function" 'heddle::f2f<&user::negate>(1)' "heddle::f2f<Fn>: Fn is the address of a non-member function"
# An overloaded name has no type to deduce: the compiler's own error, before f2f's body is reached.
check refused "an overload without its type" 'heddle::f2f<&user::twice>(1)' "f2f"

# No public header defines a lowercase macro: a name like f2f or min would clash with users' code.
checks=$((checks + 1))
if grep -rnE '^[[:space:]]*#[[:space:]]*define[[:space:]]+[a-z]' "$inc" >"$tmp/macros"; then
  fail "a lowercase macro in a public header: $(cat "$tmp/macros")"
fi

echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
