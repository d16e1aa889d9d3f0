#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures (CMake + Ninja) and builds one flavour of heddle in its own folder.
#
#   scripts/build.sh release   build/        g++ 12, Release, the default build (shared libraries, as
#                                            users get it), everything: the tests, oneTBB, OpenMP and
#                                            MPI included, the benchmarks' checks, the examples, the
#                                            tools, the plugin tests, the install test (heddle-fw
#                                            installed and running the reconstruction job's plugin)
#   scripts/build.sh tsan      build-tsan/   g++ 12, ThreadSanitizer (-O2), static libraries (the
#                                            build that keeps -DBUILD_SHARED_LIBS=OFF tested): the
#                                            library and its tests (no oneTBB, OpenMP or Open MPI,
#                                            whose Debian builds are not instrumented)
#   scripts/build.sh asan      build-asan/   clang 14 with libstdc++ 12, AddressSanitizer and
#                                            UndefinedBehaviorSanitizer together (-O1), shared libraries
#                                            with the plugin tests; the reduced build: without liburing,
#                                            MPI, FastJet and HDF5, as on a machine lacking them
#   scripts/build.sh demo      build-demo/   Release, shared: heddle-fw, the layers under it and the
#                                            reconstruction job's plugin only (make demo)
#
# Every flavour is a unity build (CMAKE_UNITY_BUILD: a target's files compiled in batches of up to
# 12, what their headers instantiate compiled once a batch: on the 2-core AMD VM the Release build
# took 7m06s, against 11m52s file by file with a program per test file);
# HEDDLE_CMAKE_ARGS=-DCMAKE_UNITY_BUILD=OFF builds file by file. The sanitizer flavours make one ctest
# test of each GoogleTest suite, the release flavour one of each test (HEDDLE_TEST_GRANULARITY,
# tests/gtest_suites.cmake): a sanitized program's start is what a one-test process mostly spends.
# `scripts/build.sh --dir FLAVOUR` prints the flavour's folder. Extra CMake arguments can be given
# in HEDDLE_CMAKE_ARGS; the build's parallelism in HEDDLE_BUILD_JOBS (default: Ninja's own).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

print_dir=0
if [[ ${1:-} == --dir ]]; then
  print_dir=1
  shift
fi
flavour=${1:?usage: scripts/build.sh [--dir] release|tsan|asan|demo}

common=(-G Ninja -DHEDDLE_BUILD_TESTS=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=12 "-DHEDDLE_TEST_FLAVOUR=$flavour")
targets=()
want_cxx=
case "$flavour" in
  demo)
    # A first run builds only what it runs: no tests, peers, examples, nor the am layer. Shared (the
    # default), because the job's modules are a plugin heddle-fw opens (examples/hep).
    dir=build-demo
    common=(-G Ninja -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=12)
    args=(-DCMAKE_BUILD_TYPE=Release -DHEDDLE_SANITIZE= -DHEDDLE_BUILD_TESTS=OFF -DHEDDLE_BUILD_BENCH=OFF
          -DHEDDLE_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=ON -DHEDDLE_BUILD_HEP=ON)
    targets=(--target heddle-fw heddle_hep)
    ;;
  release)
    # The build users get from `cmake` without options and `make install` (shared libraries): what
    # the suite tests most is what they run, the installed heddle-fw opening its plugins included.
    # The libraries, tools, examples and benchmarks at Release's -O3; the test programs themselves
    # at -O1 (HEDDLE_TEST_CXX_FLAGS), which the compiler spends a quarter less time on (their unity
    # batches are the build's largest), as the tsan flavour does, with sibling calls kept: a
    # coroutine's symmetric transfer is then a tail call, as in users' optimised code, and a
    # million-deep chain of co_awaits needs no stack (Coroutine.AMillionDeepChainUsesNoStack).
    dir=build
    args=(-DCMAKE_BUILD_TYPE=Release -DHEDDLE_SANITIZE= -DBUILD_SHARED_LIBS=ON -DHEDDLE_BUILD_BENCH=ON
          -DHEDDLE_BUILD_EXAMPLES=ON -DHEDDLE_TEST_GRANULARITY=test "-DHEDDLE_TEST_CXX_FLAGS=-O1;-foptimize-sibling-calls")
    ;;
  tsan)
    # RelWithDebInfo (-O2) keeps the stress tests quick under ThreadSanitizer; the test programs
    # themselves at -O1 (tests/CMakeLists.txt: HEDDLE_TEST_CXX_FLAGS): at -O0 the sort tests' own
    # std::sort ran twice as long. Static: the one phase that keeps the static libraries
    # (-DBUILD_SHARED_LIBS=OFF: their inline thread-locals, a program linking every layer's archive)
    # tested; the other two are shared, and asan runs the plugin tests under its checks. (Under
    # ThreadSanitizer the plugin tests found a worker woken from another runtime after its own was
    # destroyed; Shutdown.*RaceTheRuntimesEnd, which run here, keep that covered.)
    dir=build-tsan
    args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEDDLE_SANITIZE=thread -DBUILD_SHARED_LIBS=OFF -DHEDDLE_TEST_CXX_FLAGS=-O1
          -DHEDDLE_BUILD_BENCH=OFF -DHEDDLE_BUILD_EXAMPLES=OFF -DHEDDLE_TEST_GRANULARITY=suite)
    ;;
  asan)
    # The second compiler carries AddressSanitizer and UndefinedBehaviorSanitizer, which are made to
    # share a build. The libraries at -O1, the test programs at -O0 (HEDDLE_TEST_CXX_FLAGS): the
    # instrumented compiles are the suite's slowest.
    # Shared: versioned libraries with hidden symbols, a test program and a dlopen()ed plugin on
    # them (tests/plugin), and UBSan's vptr check sees any polymorphic type whose type_info a
    # library failed to export. The reduced build: files through I/O threads, no heddle::mpi, no am
    # MPI backend (Open MPI is not instrumented anyway), no hep modules (the job's plain C++ parts
    # and their tests stay).
    dir=build-asan
    want_cxx=$(command -v clang++-14 || command -v clang++ || true)
    [[ -n $want_cxx ]] || { echo "build.sh: clang++ not found (make deps installs it)" >&2; exit 1; }
    args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" "-DCMAKE_CXX_COMPILER=$want_cxx"
          -DHEDDLE_SANITIZE=address,undefined -DBUILD_SHARED_LIBS=ON -DHEDDLE_TEST_CXX_FLAGS=-O0 -DHEDDLE_BUILD_BENCH=OFF -DHEDDLE_BUILD_EXAMPLES=OFF
          -DHEDDLE_TEST_GRANULARITY=suite
          -DHEDDLE_WITH_LIBURING=OFF -DHEDDLE_WITH_MPI=OFF -DHEDDLE_WITH_FASTJET=OFF -DHEDDLE_WITH_HDF5=OFF)
    ;;
  *)
    echo "build.sh: unknown flavour '$flavour' (release, tsan, asan or demo)" >&2
    exit 2
    ;;
esac

if [[ $print_dir -eq 1 ]]; then
  echo "$dir"
  exit 0
fi

cd "$root"

# A folder configured by another generator (or another compiler) cannot be reconfigured in
# place: start it afresh rather than fail with CMake's "does not match the generator" error.
cache=$dir/CMakeCache.txt
if [[ -f $cache ]]; then
  gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
  if [[ $gen != Ninja ]] || { [[ -n $want_cxx ]] && [[ $cxx != "$want_cxx" ]]; } ||
     { [[ -z $want_cxx ]] && [[ $cxx == *clang* ]]; }; then
    echo "build.sh: $dir was configured with '$gen' / '$cxx': configuring it afresh" >&2
    rm -rf "$cache" "$dir/CMakeFiles"
  fi
fi

mkdir -p "$dir"
log=$dir/configure.log
# Configure quietly; show CMake's warnings and heddle's own status lines, the whole log on failure.
# shellcheck disable=SC2086  # HEDDLE_CMAKE_ARGS is a list of words on purpose
if ! cmake -S . -B "$dir" "${common[@]}" "${args[@]}" ${HEDDLE_CMAKE_ARGS:-} >"$log" 2>&1; then
  cat "$log" >&2
  echo "build.sh: configuring $dir failed (log above, also in $log)" >&2
  exit 1
fi
grep -E -A4 '^CMake (Warning|Deprecation)' "$log" >&2 || true
grep -E '^-- heddle' "$log" || true

jobs=()
[[ -n ${HEDDLE_BUILD_JOBS:-} ]] && jobs=(--parallel "$HEDDLE_BUILD_JOBS")
# clang's malloc on transparent huge pages (glibc.malloc.hugetlb=1: madvise, where the kernel's THP
# setting is madvise or always; nothing otherwise, nor in a glibc older than 2.35, which ignores
# it): its memory faults in 2 MiB at a time. On the 2-core VM a test program's -O0 unity file under
# ASan+UBSan took 15 to 20% less CPU (interleaved runs). GCC allocates its own pages and gains
# nothing, so the g++ flavours build as before.
if [[ $flavour == asan ]]; then
  export GLIBC_TUNABLES=${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1
fi
cmake --build "$dir" "${jobs[@]}" "${targets[@]}"
