#!/usr/bin/env bash
# The install test: installs a built heddle into a temporary prefix, then builds and runs
# consumer/main.cpp against it twice, as users would:
#   1. an outside CMake project: find_package(heddle CONFIG REQUIRED) + heddle::heddle (and
#      consumer/fw_main.cpp with heddle::fw);
#   2. one compiler command with `pkg-config --cflags --libs heddle`.
# Uses the C++ compiler the build folder was configured with. Cleans up after itself (keep the
# folder for a look with HEDDLE_KEEP_INSTALL_TEST=1).
#
# Usage: tests/install/run.sh <heddle build folder>
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 1 ]] || { echo "usage: $0 <heddle build folder>" >&2; exit 2; }
build=$(cd "$1" && pwd)
[[ -f $build/CMakeCache.txt ]] || { echo "install test: $build is not a configured CMake build folder" >&2; exit 2; }

cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n $cxx ]] || cxx=c++
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-install-test.XXXXXX")
if [[ ${HEDDLE_KEEP_INSTALL_TEST:-0} == 1 ]]; then
  trap 'echo "install test: kept $tmp"' EXIT
else
  trap 'rm -rf "$tmp"' EXIT
fi
prefix=$tmp/prefix

fail() {
  echo "install test: FAILED: $*" >&2
  exit 1
}
# Runs a command quietly; on failure shows its output and fails with the given message.
quiet() {
  local what=$1
  shift
  if ! "$@" >"$tmp/step.log" 2>&1; then
    cat "$tmp/step.log" >&2
    fail "$what"
  fi
}

echo "== install $build into $prefix"
quiet "cmake --install" cmake --install "$build" --prefix "$prefix"
for f in include/heddle/heddle.hpp include/heddle/core.hpp; do
  [[ -f $prefix/$f ]] || fail "$f is not installed"
done
lib=$(find "$prefix" -name libheddle.a -print -quit)
[[ -n $(find "$prefix" -name libheddle_fw.a -print -quit) ]] || fail "libheddle_fw.a is not installed"
[[ -n $(find "$prefix" -name libheddle_am.a -print -quit) ]] || fail "libheddle_am.a is not installed"
config=$(find "$prefix" -name heddleConfig.cmake -print -quit)
pc=$(find "$prefix" -name heddle.pc -print -quit)
[[ -n $lib ]] || fail "libheddle.a is not installed"
[[ -n $config ]] || fail "heddleConfig.cmake is not installed"
[[ -n $pc ]] || fail "heddle.pc is not installed"
targets=$(dirname "$config")/heddleTargets.cmake
# shellcheck disable=SC2016  # ${_IMPORT_PREFIX} is literal text in the file
grep -q 'INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/' "$targets" ||
  fail "heddle::heddle carries no installed include folder (INTERFACE_INCLUDE_DIRECTORIES in $targets)"
# Nothing from the build or source tree may leak into the installed package.
if grep -rlE "$build|$(cd "$here/../.." && pwd)/(include|src)" "$(dirname "$config")" "$pc"; then
  fail "the installed package refers to the build or source tree (files above)"
fi

echo "== CMake consumer: find_package(heddle CONFIG REQUIRED), heddle::heddle, heddle::fw and heddle::am ($cxx)"
quiet "configuring the CMake consumer" \
  cmake -S "$here/consumer" -B "$tmp/consumer-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^heddle_DIR:[A-Z]*=//p' "$tmp/consumer-build/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package found heddle in '$found', not under $prefix"
quiet "building the CMake consumer" cmake --build "$tmp/consumer-build"
"$tmp/consumer-build/app" || fail "the CMake consumer's checks failed"
"$tmp/consumer-build/app_fw" || fail "the CMake consumer's framework checks failed"
"$tmp/consumer-build/app_am" --heddle-backend=loopback --heddle-nodes=3 || fail "the CMake consumer's active-message checks failed"
[[ -x $prefix/bin/heddle-run ]] || fail "heddle-run is not installed"

echo "== pkg-config consumer: $cxx main.cpp \$(pkg-config --cflags --libs heddle)"
command -v pkg-config >/dev/null 2>&1 || fail "pkg-config is not installed (make deps)"
# Only the installed prefix's .pc files: a heddle in /usr/local must not stand in for this one.
export PKG_CONFIG_LIBDIR
PKG_CONFIG_LIBDIR=$(dirname "$pc")
flags=$(pkg-config --cflags --libs heddle) || fail "pkg-config does not know heddle"
echo "   pkg-config: $flags"
incdir=$(realpath -m "$(pkg-config --variable=includedir heddle)")
[[ $incdir == "$(realpath "$prefix")"/* ]] || fail "heddle.pc's includedir is $incdir, not under $prefix"
# shellcheck disable=SC2086  # the flags are a list of words
quiet "building with pkg-config flags" "$cxx" -O2 -Wall -Wextra "$here/consumer/main.cpp" -o "$tmp/pc-app" $flags
"$tmp/pc-app" || fail "the pkg-config consumer's checks failed"

echo "install test: passed"
