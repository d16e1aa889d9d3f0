#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: the framework's main job, a reconstruction of LHC events (examples/hep/reco.json):
# Pythia events from Debian's fastjet-examples mixed with mu = 50 pile-up, particle flow, FastJet
# jets, corrections from conditions, two selections, histograms and an HDF5 file. heddle-fw runs it
# multi-threaded, then with the single-threaded processor; the demo checks that both give the same
# checksum and files of the same content, checks the file against its layout, and draws the
# histograms (results/hep/*.png).
#   scripts/demo.sh [BUILD_DIR]     (BUILD_DIR: a shared build with the hep plugin; default build-demo)
# Extra heddle-fw options in HEDDLE_DEMO_ARGS (e.g. "--events 100 --pileup 140").
set -euo pipefail
build=${1:-build-demo}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fw=$build/bin/heddle-fw
[[ -x $fw ]] || { echo "demo.sh: $fw was not built (scripts/build.sh demo)" >&2; exit 1; }
out=results/hep
mkdir -p "$out"

# A python3 with h5py and matplotlib: Debian's (/usr/bin/python3) where another python3 comes first.
python=
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import h5py, matplotlib' 2>/dev/null; then
    python=$candidate
    break
  fi
done
[[ -n $python ]] || { echo "demo.sh: no python3 imports h5py and matplotlib (apt-get install python3-h5py python3-matplotlib)" >&2; exit 1; }

config=$root/examples/hep/reco.json
# shellcheck disable=SC2086  # HEDDLE_DEMO_ARGS is a list of words on purpose
"$fw" "$config" --out "$out/threaded.h5" --json "$out/threaded.json" ${HEDDLE_DEMO_ARGS:-}
echo
"$fw" "$config" --single-threaded --quiet --out "$out/single.h5" --json "$out/single.json" ${HEDDLE_DEMO_ARGS:-} |
  grep -v '^#'  # FastJet's banner, once is enough
echo
"$python" "$root/examples/hep/check_output.py" "$out/threaded.h5"
"$python" "$root/examples/hep/compare_outputs.py" "$out/threaded.h5" "$out/single.h5"
"$python" "$root/examples/hep/plot_histograms.py" "$out/threaded.h5" --out "$out" >/dev/null
echo "demo: histograms drawn in $out/ (summary.png has them all)"
"$python" - "$out/threaded.json" "$out/single.json" <<'PY'
import json, sys
t, s = (json.load(open(p)) for p in sys.argv[1:3])
same = "equal" if t["checksum"] == s["checksum"] else "DIFFERENT"
print(f"demo: {t['events']} events, {t['workers']} worker threads, {t['events_in_flight']} events in flight: "
      f"{t['events_per_s'] / s['events_per_s']:.2f}x the single-threaded processor's throughput; checksums {same}")
sys.exit(0 if same == "equal" else 1)
PY
