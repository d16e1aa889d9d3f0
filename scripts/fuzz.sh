#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make fuzz: the active-message frame fuzzer (tests/am/fuzz/frame_fuzzer.cpp) under libFuzzer with
# AddressSanitizer and UBSan, for HEDDLE_FUZZ_RUNS inputs (default 1,000,000). It starts from the
# kept corpus (tests/am/fuzz/corpus/) and adds there the inputs that reach code the corpus did not
# (a run finds a hundred or so new inputs, most of them covered by the others: a merge keeps only
# what adds coverage): commit them, and every build's ctest replays them (am_frame_fuzzer_corpus).
# A crash leaves its input in build-fuzz/ and fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clangxx=$(command -v clang++-14 || command -v clang++ || true)
[[ -n $clangxx ]] || { echo "fuzz.sh: clang++ not found (make deps installs it)" >&2; exit 1; }
runs=${HEDDLE_FUZZ_RUNS:-1000000}
mkdir -p build-fuzz/include/heddle/core
# The decoder is header code; its exceptions' key functions and the handler registry are in src/am/, and the
# headers read how the libraries are built from build_config.hpp (static here, as CMake writes it).
sed 's/@HEDDLE_SHARED_LIBS@/0/' cmake/build_config.hpp.in >build-fuzz/include/heddle/core/build_config.hpp
"$clangxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DHEDDLE_LIBFUZZER \
  -Iinclude -Ibuild-fuzz/include tests/am/fuzz/frame_fuzzer.cpp src/am/errors.cpp src/am/registry.cpp -o build-fuzz/frame_fuzzer
cd build-fuzz
rm -rf new && mkdir new  # libFuzzer writes the inputs it finds to its first corpus folder
./frame_fuzzer -runs="$runs" -max_len=4096 -print_final_stats=1 new "$root/tests/am/fuzz/corpus" 2>&1 | tail -25
./frame_fuzzer -merge=1 "$root/tests/am/fuzz/corpus" new 2>&1 | tail -1
echo "fuzz.sh: $runs inputs without a crash; corpus: $(ls "$root/tests/am/fuzz/corpus" | wc -l) files"
