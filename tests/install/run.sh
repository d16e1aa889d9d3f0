#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The install test: installs a built heddle into a temporary prefix, then builds and runs programs
# against it as users would:
#   1. an outside CMake project: find_package(heddle CONFIG REQUIRED) + heddle::heddle, and the
#      components fw and am (consumer/fw_main.cpp, consumer/am_main.cpp);
#   2. the same project asking for the core component alone, configured with MPI and nlohmann-json
#      hidden from CMake: a core-only program needs neither;
#   3. one compiler command with `pkg-config --cflags --libs heddle` (and heddle-core for the
#      core-only program).
# Also checks that the tools (heddle-fw, heddle-run) and heddle-fw's reference and examples are
# installed; and, when the build is shared (the default), builds the plugin project examples/fw-plugin
# against the prefix and runs the installed heddle-fw on its configuration with --plugin-path, and
# runs the installed heddle-fw on the installed reconstruction job (examples/hep) and its plugin.
# Uses the C++ compiler the build folder was configured with; the consumers compile without
# optimisation (-O0: what they check is the package, not the code, and -O2 made this test the
# suite's slowest). Cleans up after itself (keep the folder for a look with HEDDLE_KEEP_INSTALL_TEST=1).
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
# A static build installs libheddle_<layer>.a; a shared one (-DBUILD_SHARED_LIBS=ON) the versioned
# libheddle_<layer>.so.<version> whose SONAME names the major.minor version, and its links.
shared=$(sed -n 's/^BUILD_SHARED_LIBS:[A-Z]*=//p' "$build/CMakeCache.txt")
# The layers, from the table (cmake/layers.cmake): each is a library and a pkg-config file.
read -ra layers <<<"$(cmake -DPRINT=HEDDLE_LAYERS -P "$here/../../cmake/layers.cmake")"
[[ ${#layers[@]} -ge 5 ]] || fail "cmake/layers.cmake names no layers"
for layer in "${layers[@]}"; do
  if [[ $shared =~ ^(ON|on|1|TRUE|true|YES|yes)$ ]]; then
    lib=$(find "$prefix" -name "libheddle_$layer.so.*.*.*" -print -quit)
    [[ -n $lib ]] || fail "libheddle_$layer.so.<version> is not installed"
    soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [[ $soname =~ ^libheddle_$layer\.so\.[0-9]+\.[0-9]+$ && -e $(dirname "$lib")/$soname ]] ||
      fail "$lib has SONAME '$soname', not an installed libheddle_$layer.so.<major>.<minor>"
    export LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}  # for the pkg-config program
  else
    [[ -n $(find "$prefix" -name "libheddle_$layer.a" -print -quit) ]] || fail "libheddle_$layer.a is not installed"
  fi
done
config=$(find "$prefix" -name heddleConfig.cmake -print -quit)
pc=$(find "$prefix" -name heddle.pc -print -quit)
[[ -n $config ]] || fail "heddleConfig.cmake is not installed"
[[ -n $pc ]] || fail "heddle.pc is not installed"
for layer in "${layers[@]}"; do
  [[ -f $(dirname "$pc")/heddle-$layer.pc ]] || fail "heddle-$layer.pc is not installed"
done
for tool in heddle-fw heddle-run; do
  [[ -x $prefix/bin/$tool ]] || fail "$tool is not installed"
done
[[ -f $prefix/share/heddle/fw-config.md ]] || fail "heddle-fw's configuration reference is not installed (share/heddle/fw-config.md)"
[[ -n $(find "$prefix/share/heddle/examples" -name '*.json' -print -quit 2>/dev/null) ]] ||
  fail "no example configuration under share/heddle/examples"
"$prefix/bin/heddle-fw" "$prefix/share/heddle/examples/chain.json" --events 20 --time-scale 1e-3 >"$tmp/fw.out" 2>&1 ||
  { cat "$tmp/fw.out" >&2; fail "the installed heddle-fw does not run the installed example chain.json"; }
# No installed header includes a header that stayed behind (src/, or an internal left out of the
# install): every #include "..." and #include <heddle/...> of every installed header, detail/ ones
# included, names a file of the installed tree.
stayed_behind=$(cd "$prefix/include" && grep -rHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("|<heddle/)' heddle |
  sed -E 's/^([^:]+):[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1 \2/' |
  while read -r file name; do
    [[ -f ${file%/*}/$name || -f $name ]] || echo "$file includes $name"
  done)
[[ -z $stayed_behind ]] || { echo "$stayed_behind" >&2; fail "installed headers include headers that were not installed (above)"; }
# Every public header (those outside detail/, which users include) compiles on its own against the
# installed tree: it includes what it uses. Only async/mpi.hpp needs more (mpi.h), and is installed
# only with heddle::mpi. (The detail/ headers are reached through the public ones; compiling each of
# them alone too doubled this test's time.) With clang++ where it is installed: it parses them in 30%
# less time than g++ (the build compiles every header with the build's own compiler anyway). Its
# malloc on transparent huge pages (glibc.malloc.hugetlb=1: madvise, where the kernel's THP setting
# is madvise or always; nothing otherwise): the parse's memory faults in 2 MiB at a time, which took
# this check from 114 to 82 s of CPU on the 2-core VM (83 headers, interleaved); g++'s own allocator
# gains nothing from it.
mpi_cflags=$(pkg-config --cflags mpi-c 2>/dev/null || true)
header_cxx=$(command -v clang++-14 || command -v clang++ || echo "$cxx")
find "$prefix/include/heddle" -name '*.hpp' -not -path '*/detail/*' -print0 |
  GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1 xargs -0 -P 2 -I{} sh -c 'printf "#include \"%s\"\n" "$1" | "$2" -std=c++20 -fsyntax-only -x c++ -I"$3" $4 - 2>&1 | sed "s|^|$1: |"' _ {} "$header_cxx" "$prefix/include" "$mpi_cflags" >"$tmp/headers.log"
[[ ! -s $tmp/headers.log ]] || { head -40 "$tmp/headers.log" >&2; fail "installed headers that do not compile on their own (above)"; }
targets=$(dirname "$config")/heddle-core-targets.cmake
# shellcheck disable=SC2016  # ${_IMPORT_PREFIX} is literal text in the file
grep -q 'INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/' "$targets" ||
  fail "heddle::heddle carries no installed include folder (INTERFACE_INCLUDE_DIRECTORIES in $targets)"
# Nothing from the build or source tree may leak into the installed package.
if grep -rlE "$build|$(cd "$here/../.." && pwd)/(include|src)" "$(dirname "$config")" "$pc"; then
  fail "the installed package refers to the build or source tree (files above)"
fi

if [[ $shared =~ ^(ON|on|1|TRUE|true|YES|yes)$ ]]; then
  # A plugin project as a user writes one (examples/fw-plugin): find_package(heddle COMPONENTS fw)
  # gives heddle_fw_add_plugin; the installed heddle-fw runs its types from --plugin-path, with the
  # same checksum in both processors.
  echo "== plugin project: examples/fw-plugin with heddle_fw_add_plugin, run by the installed heddle-fw --plugin-path"
  example=$here/../../examples/fw-plugin
  quiet "configuring examples/fw-plugin" \
    cmake -S "$example" -B "$tmp/plugin-build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  quiet "building examples/fw-plugin" cmake --build "$tmp/plugin-build"
  plugin=$tmp/plugin-build/plugins/libfwplugin_random_walk.so
  [[ -f $plugin ]] || fail "examples/fw-plugin did not build $plugin"
  readelf -sW --dyn-syms "$plugin" | grep -q UNIQUE && fail "$plugin has STB_GNU_UNIQUE symbols: it could never be unloaded"
  for processor in threaded single; do
    flags=(--quiet --json "$tmp/plugin-$processor.json")
    [[ $processor == single ]] && flags+=(--single-threaded)
    "$prefix/bin/heddle-fw" "$example/random_walk.json" --plugin-path "$tmp/plugin-build/plugins" "${flags[@]}" \
      >"$tmp/plugin.out" 2>&1 || { cat "$tmp/plugin.out" >&2; fail "the installed heddle-fw does not run examples/fw-plugin ($processor)"; }
    grep -q '^busy events, job: [1-9][0-9]* events' "$tmp/plugin.out" ||
      { cat "$tmp/plugin.out" >&2; fail "examples/fw-plugin's summary did not report its events ($processor)"; }
    sed -n 's/^ *"checksum": "\(0x[0-9a-f]*\)",$/\1/p' "$tmp/plugin-$processor.json" | head -1 >"$tmp/plugin-$processor.sum"
  done
  [[ -s $tmp/plugin-threaded.sum && $(cat "$tmp/plugin-threaded.sum") == "$(cat "$tmp/plugin-single.sum")" ]] ||
    fail "examples/fw-plugin: checksums differ: threaded '$(cat "$tmp/plugin-threaded.sum")', single-threaded '$(cat "$tmp/plugin-single.sum")'"
  [[ -f $tmp/plugin-build/plugins/.heddle-fw-plugins ]] || fail "heddle-fw wrote no plugin cache beside examples/fw-plugin's library"

  # The project's own job (examples/hep) as its guide tells a user to run it: the installed heddle-fw
  # finds the installed plugin by itself (<libdir>/heddle/plugins, no --plugin-path) and runs the
  # installed reco.json. Where the build made the plugin, it must be installed and run.
  if [[ -n $(find "$build" -path '*/heddle/plugins/libheddle_hep.so' -print -quit) ]]; then
    reco=$prefix/share/heddle/examples/hep/reco.json
    [[ -f $reco ]] || fail "the build has the hep plugin, but examples/hep/reco.json is not installed"
    [[ -n $(find "$prefix" -path '*/heddle/plugins/libheddle_hep.so' -print -quit) ]] ||
      fail "the build has the hep plugin, but it is not installed under <libdir>/heddle/plugins"
    data=$(sed -n 's/^HEDDLE_FASTJET_EXAMPLES:[A-Z]*=//p' "$build/CMakeCache.txt")
    if [[ -f $data/Pythia-PtMin1000-LHC-10ev.dat ]]; then
      echo "== the reconstruction job: the installed heddle-fw on the installed reco.json and plugin"
      (cd "$tmp" && "$prefix/bin/heddle-fw" "$reco" --events 4 --pileup 5 --out "$tmp/reco.h5" --quiet) >"$tmp/reco.out" 2>&1 ||
        { cat "$tmp/reco.out" >&2; fail "the installed heddle-fw does not run the installed examples/hep/reco.json"; }
      grep -q "^ *events  *4 in " "$tmp/reco.out" && grep -q "checksum  *0x" "$tmp/reco.out" && [[ -f $tmp/reco.h5 ]] ||
        { cat "$tmp/reco.out" >&2; fail "the installed reconstruction job did not report 4 events and a checksum, or wrote no file"; }
    else
      echo "== the reconstruction job: not run, '$data' has no Pythia files (apt-get install fastjet-examples)"
    fi
  fi
fi

echo "== CMake consumer: find_package(heddle CONFIG REQUIRED), heddle::heddle, heddle::fw and heddle::am ($cxx)"
quiet "configuring the CMake consumer" \
  cmake -S "$here/consumer" -B "$tmp/consumer-build" "${generator[@]}" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O0 \
  "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
found=$(sed -n 's/^heddle_DIR:[A-Z]*=//p' "$tmp/consumer-build/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package found heddle in '$found', not under $prefix"
quiet "building the CMake consumer" cmake --build "$tmp/consumer-build"
"$tmp/consumer-build/app" || fail "the CMake consumer's checks failed"
"$tmp/consumer-build/app_fw" || fail "the CMake consumer's framework checks failed"
"$tmp/consumer-build/app_am" --heddle-backend=loopback --heddle-nodes=3 || fail "the CMake consumer's active-message checks failed"

echo "== CMake consumer of the core component alone, MPI and nlohmann-json hidden"
quiet "configuring the core-only consumer (find_package(heddle COMPONENTS core) must not look for MPI or nlohmann-json)" \
  cmake -S "$here/consumer" -B "$tmp/core-build" "${generator[@]}" -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS=-O0 -DHEDDLE_CONSUMER=core \
  "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
quiet "building the core-only consumer" cmake --build "$tmp/core-build"
"$tmp/core-build/app_core" || fail "the core-only consumer's checks failed"

echo "== pkg-config consumer: $cxx main.cpp \$(pkg-config --cflags --libs heddle)"
command -v pkg-config >/dev/null 2>&1 || fail "pkg-config is not installed (make deps)"
# The installed prefix's .pc files first (a heddle in /usr/local must not stand in for this one),
# then the system's, where the packages heddle's files require lie (liburing, mpi-c, nlohmann_json).
system_pc_path=$(pkg-config --variable pc_path pkg-config)
export PKG_CONFIG_LIBDIR
PKG_CONFIG_LIBDIR=$(dirname "$pc"):$system_pc_path
flags=$(pkg-config --cflags --libs heddle) || fail "pkg-config does not know heddle"
echo "   pkg-config: $flags"
incdir=$(realpath -m "$(pkg-config --variable=includedir heddle)")
[[ $incdir == "$(realpath "$prefix")"/* ]] || fail "heddle.pc's includedir is $incdir, not under $prefix"
# shellcheck disable=SC2086  # the flags are a list of words
quiet "building with pkg-config flags" "$cxx" -O0 -Wall -Wextra "$here/consumer/main.cpp" -o "$tmp/pc-app" $flags
"$tmp/pc-app" || fail "the pkg-config consumer's checks failed"
flags=$(pkg-config --cflags --libs heddle-core) || fail "pkg-config does not know heddle-core"
[[ $flags != *uring* && $flags != *mpi* ]] || fail "heddle-core.pc asks for more than the core needs: $flags"
# shellcheck disable=SC2086  # the flags are a list of words
quiet "building the core-only program with pkg-config flags" "$cxx" -O0 -Wall -Wextra "$here/consumer/core_main.cpp" -o "$tmp/pc-core" $flags
"$tmp/pc-core" || fail "the pkg-config core-only consumer's checks failed"

echo "install test: passed"
