#!/usr/bin/env bash
# make demo: the framework's main job on a bundled default. heddle-fw generates a CMS-like
# configuration (build/demo/cms_like.json, from the statistics of the study's real ones), runs it
# multi-threaded, then with the single-threaded reference processor, and compares the two.
#   scripts/demo.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
fw=$build/bin/heddle-fw
[[ -x $fw ]] || { echo "demo.sh: $fw was not built (make build)" >&2; exit 1; }
mkdir -p "$build/demo"
config=$build/demo/cms_like.json
"$fw" generate -o "$config"
echo
"$fw" "$config" --json "$build/demo/threaded.json"
echo
"$fw" "$config" --single-threaded --json "$build/demo/single.json"
echo
python3 - "$build/demo/threaded.json" "$build/demo/single.json" <<'PY'
import json, sys
t, s = (json.load(open(p)) for p in sys.argv[1:3])
same = "equal" if t["checksum"] == s["checksum"] else "DIFFERENT"
print(f"demo: {t['workers']} worker threads, {t['events_in_flight']} events in flight: "
      f"{t['events_per_s'] / s['events_per_s']:.2f}x the single-threaded processor's throughput; checksums {same}")
sys.exit(0 if same == "equal" else 1)
PY
