#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages heddle needs, and only those that are missing.
#
# Idempotent and quiet: when everything is present it makes one dpkg-query call and exits (well
# under a second, no network). When something is missing it runs `apt-get update` once, then
# installs just the missing packages. Uses sudo only when not root.
#
# Usage: scripts/install-deps.sh [--demo] [-n|--dry-run]
#   --demo: only what `make demo` builds (heddle-fw and the layers under it), for a quick first run
#   -n:     list what is missing, install nothing
set -euo pipefail

# What `make demo` needs: a compiler, CMake and Ninja, heddle-fw's two libraries, and the
# reconstruction job's (liburing and MPI are optional: the demo runs without them).
demo_packages=(
  g++ cmake ninja-build make pkg-config python3                 # toolchain (g++ 12)
  nlohmann-json3-dev libcli11-dev                               # configs and command lines
  libfastjet-dev libfastjettools-dev fastjet-examples           # the job's jets, and its Pythia events
  libhdf5-dev python3-h5py python3-matplotlib                   # its output, checks and plots
)
packages=(
  "${demo_packages[@]}"
  build-essential clang                                         # the second compiler (clang 14)
  libgtest-dev libgmock-dev                                     # tests
  python3-jsonschema                                            # heddle-trace validate (and its tests)
  libtbb-dev libbenchmark-dev                                   # peers and micro-benchmarks
  libopenmpi-dev openmpi-bin                                    # am layer over MPI
  liburing-dev libhwloc-dev                                     # async engines, topology
  valgrind                                                      # callgrind instruction counts
  clang-format-14                                               # scripts/format.sh (the test build_format)
)

dry_run=0
for arg in "$@"; do
  case "$arg" in
    -n | --dry-run) dry_run=1 ;;
    --demo) packages=("${demo_packages[@]}") ;;
    *) echo "usage: $0 [--demo] [-n|--dry-run]" >&2; exit 2 ;;
  esac
done

die() {
  echo "install-deps: error: $*" >&2
  exit 1
}

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script is for Debian (12) and its derivatives"

# One dpkg-query for all packages. Unknown names print nothing on stdout (an error on stderr),
# so a package counts as installed only when dpkg reports it as "ii" (installed, no error).
# Prints the names among "$@" that dpkg does not report as installed ("ii"), one a line.
not_installed() {
  local -A ok=()
  local name status
  while read -r name status; do
    [[ $status == ii* ]] && ok[${name%%:*}]=1  # libfoo:amd64 counts as libfoo
  done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null || true)
  for name in "$@"; do
    [[ -n ${ok[$name]:-} ]] || echo "$name"
  done
}

mapfile -t missing < <(not_installed "${packages[@]}")

[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $dry_run -eq 1 ]]; then
  echo "install-deps: missing: ${missing[*]}"
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available; as root run: apt-get install ${missing[*]}"
  sudo=(sudo)
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found"

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT

if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$log" 2>&1; then
  cat "$log" >&2
  die "'apt-get update' failed (see above): check the network and /etc/apt/sources.list*"
fi
if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  die "'apt-get install ${missing[*]}' failed (see above)"
fi

# apt-get can succeed without installing a name it resolved to something else: check again.
mapfile -t still < <(not_installed "${missing[@]}")
[[ ${#still[@]} -eq 0 ]] || die "still not installed after apt-get: ${still[*]}"
echo "install-deps: done" >&2
