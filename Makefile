# SPDX-License-Identifier: Apache-2.0
# heddle: the everyday commands, over CMake + Ninja. The work is done by scripts/ (build.sh for one
# build flavour, test.sh for the suite), so CI and people run the same thing.
#
#   make deps      install the missing Debian packages (scripts/install-deps.sh)
#   make build     Release build in build/ (library, tests, examples, tools, benchmarks)
#   make demo      the demo's packages, a shared build of heddle-fw and the reconstruction job's plugin
#                  alone (build-demo/), then the job (examples/hep/reco.json) threaded and
#                  single-threaded, its files compared and its histograms drawn (results/hep/)
#   make test      deps + every phase: release (g++, shared, everything), tsan (g++, ThreadSanitizer,
#                  static), asan (clang 14, AddressSanitizer + UBSan, shared, reduced); ends with the line
#                  "N passed, N failed, N skipped"
#   make test-release | test-tsan | test-asan    one phase only
#   make stress    deps, then the stress, race and multi-process tests repeated until they fail or
#                  pass N times (N=20), in the release and tsan builds (scripts/stress.sh)
#   make bench     deps + build, then build/bin/heddle-bench all --quick (results/)
#   make fuzz      deps, then libFuzzer on the active-message frame decoder (scripts/fuzz.sh)
#   make install   cmake --install build --prefix $(PREFIX)   (PREFIX=/usr/local): the release build,
#                  shared libraries as every default build
#   make clean     remove the build folders and results/
#
# Settings: PREFIX, and the environment variables scripts/test.sh and scripts/build.sh read
# (HEDDLE_CTEST_JOBS, HEDDLE_CTEST_ARGS, HEDDLE_BUILD_JOBS, HEDDLE_CMAKE_ARGS, *SAN_OPTIONS).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
# The phases share the machine's two cores and some share folders: one recipe at a time.
.NOTPARALLEL:

PREFIX ?= /usr/local
BUILD_DIR := build
BIN := $(BUILD_DIR)/bin
RESULTS := results

.PHONY: deps build demo test test-release test-tsan test-asan stress bench fuzz install clean help

help:
	@grep -v '^# SPDX-License-Identifier:' Makefile | sed -n '3,22p' | sed 's/^# \{0,1\}//'

deps:
	@scripts/install-deps.sh

build: deps
	@scripts/build.sh release

# A first run installs and builds only what the demo runs (scripts/build.sh demo).
demo:
	@scripts/install-deps.sh --demo
	@scripts/build.sh demo
	@scripts/demo.sh build-demo

test: deps
	@scripts/test.sh

test-release test-tsan test-asan: deps
	@scripts/test.sh $(@:test-%=%)

N ?= 20
stress: deps
	@scripts/stress.sh $(N)

bench: build
	@test -x $(BIN)/heddle-bench || { echo "make bench: $(BIN)/heddle-bench was not built (tools/, bench/)" >&2; exit 1; }
	@mkdir -p $(RESULTS)
	$(BIN)/heddle-bench all --quick --json $(RESULTS)/bench.json --plot $(RESULTS)

fuzz: deps
	@scripts/fuzz.sh

install: build
	cmake --install $(BUILD_DIR) --prefix "$(PREFIX)"

clean:
	rm -rf build build-tsan build-asan build-demo build-fuzz $(RESULTS)
