#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-fw on the reconstruction job as a user runs it: the plugin found where heddle-fw's build put
# it (no --plugin-path), the options the configuration declares (--pileup, --out) and --set, the
# report and the file; and a misspelt option, an unknown label, a bad value, each a one-line error
# with exit status 2.
#   heddle_fw_hep.sh HEDDLE_FW CONFIG FASTJET_EXAMPLES
set -euo pipefail
fw=$1 config=$2 data=$3
if [[ ! -f $data/Pythia-PtMin1000-LHC-10ev.dat ]]; then
  echo "skipped: $data has no Pythia files (apt-get install fastjet-examples)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$fw" "$config" --events 6 --events-per-lumi 3 --pileup 5 --out "$dir/r.h5" --set dijet.ptMin=50 --quiet)
grep -q "hep: wrote $dir/r.h5: " <<<"$out" || fail "no line saying where the file went: $out"
grep -q "events            6 in 2 runs\|events            6 in 1 run" <<<"$out" || fail "not 6 events: $out"
grep -q "checksum          0x" <<<"$out" || fail "no checksum: $out"
[[ -f $dir/r.h5 && ! -e $dir/r.h5.partial ]] || fail "the file was not renamed into place"
# --set took effect: with both selections' thresholds at 5000 GeV no event passes, with dijet's at
# 50 GeV some do.
many=$(grep -o "wrote [^:]*: [0-9]* of" <<<"$out" | grep -o "[0-9]* of" | cut -d' ' -f1)
out2=$("$fw" "$config" --events 6 --events-per-lumi 3 --pileup 5 --out "$dir/r2.h5" --set dijet.ptMin=5000 --set boosted.ptMin=5000 --quiet)
few=$(grep -o "wrote [^:]*: [0-9]* of" <<<"$out2" | grep -o "[0-9]* of" | cut -d' ' -f1)
[[ $few -eq 0 && $many -gt 0 ]] || fail "--set did not change the selections ($many, then $few events selected)"

expect_error() {  # expect_error TEXT ARGS...: exit status 2 and TEXT on stderr
  local text=$1 rc=0
  shift
  err=$("$fw" "$config" --events 2 --quiet --out "$dir/e.h5" "$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 ]] || fail "$* exited $rc, not 2: $err"
  grep -qF -- "$text" <<<"$err" || fail "$*: expected '$text' in: $err"
  [[ ! -e $dir/e.h5 ]] || fail "$*: a file was written"
}
expect_error "unknown option --pilup: neither heddle-fw's nor $config's (it declares --out, --pileup)" --pilup 5
expect_error "option --pileup needs a value" --pileup
expect_error "--set nosuch.mu: no module labelled 'nosuch' in $config" --set nosuch.mu=5
expect_error "parameter 'mu'" --pileup -3
expect_error "--set mu: expected LABEL.PARAMETER" --set mu=5
echo "heddle_fw_hep: ok"
