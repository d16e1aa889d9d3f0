#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-fw as a user meets it: every bad input is one line on stderr and exit status 2, a module
# that throws stops the run with exit status 1 naming the module and the event, nothing hangs, and
# a good run prints its report and writes the JSON and the timeline. All of it on the project's
# own configurations (tests/fw/configs/) and ones written here; the CMS study's configurations in
# CMS_DATA_DIR, which lie beside the repository and not in it, are run unchanged where they are, and
# that part is skipped, saying so, where they are not.
#   tests/fw/heddle_fw_cli.sh HEDDLE_FW CMS_DATA_DIR
set -uo pipefail
bin=${1:?usage: heddle_fw_cli.sh HEDDLE_FW CMS_DATA_DIR}
data=${2:?usage: heddle_fw_cli.sh HEDDLE_FW CMS_DATA_DIR}
configs=$(dirname "$0")/configs
source "$(dirname "$0")/../tools/cli_support.sh"

# expect STATUS "what" "message part" args...: that exit status, the message on stderr in one line.
expect() {
  local status=$1 what=$2 message=$3
  shift 3
  timeout 120 "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq $status ]] || fail "$what: exit status $rc, expected $status ($(head -c 300 "$tmp/err"))"
  grep -qF -- "$message" "$tmp/err" || fail "$what: stderr lacks '$message': $(cat "$tmp/err")"
  if [[ $status -eq 2 && $what != cli:* ]]; then
    [[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "$what: expected one line on stderr, got: $(cat "$tmp/err")"
  fi
}

# config NAME 'producers' 'filters' 'paths': a configuration file built from parts.
config() {
  cat >"$tmp/$1.json" <<JSON
{"process":{"options":{"nSimultaneousEvents":2,"busyWaitScaleFactor":2e7},
 "source":{"@type":"demo::SimpleSource","iterations":20},
 "producers":[$2],
 "filters":[$3],
 "paths":$4}}
JSON
}

printf '{"process":\n  {"options": [1,2,}\n}\n' >"$tmp/malformed.json"
expect 2 "malformed JSON" "$tmp/malformed.json:2:20: malformed JSON" "$tmp/malformed.json"
config missing '{"@label":"alpha","@type":"demo::BusyWaitProducer"}' '{"@label":"f","@type":"PassFilter","toGet":[{"label":"alpha","product":""}]}' '{"p":["f"]}'
expect 2 "missing key" "process.producers[0] 'alpha': missing required key 'averageTime'" "$tmp/missing.json"
config type '{"@label":"a","@type":"demo::WarpDriveProducer"}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f"]}'
expect 2 "unknown type" "process.producers[0] 'a': unknown module type 'demo::WarpDriveProducer' (registered: BusyWaitOutputModule" "$tmp/type.json"
config path '{"@label":"a","@type":"FastProducer"}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f","ghost"]}'
expect 2 "unknown label in a path" "path 'p'[1]: unknown label 'ghost'" "$tmp/path.json"
config toget '{"@label":"a","@type":"FastProducer","toGet":[{"label":"ghost","product":""}]}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f"]}'
expect 2 "unknown label in toGet" "'a': consumes long 'ghost': unknown label 'ghost'" "$tmp/toget.json"
config cycle '{"@label":"a","@type":"FastProducer","toGet":[{"label":"b","product":""}]},{"@label":"b","@type":"FastProducer","toGet":[{"label":"a","product":""}]}' '{"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":""}]}' '{"p":["f"]}'
expect 2 "dependency cycle" "dependency cycle: 'a' -> 'b' -> 'a'" "$tmp/cycle.json"
config asked '{"@label":"a","@type":"FastProducer","toGet":[{"label":"f","product":""}]}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f"]}'
expect 2 "filter asked for as a producer" "'f' makes no long 'f' (it makes no products)" "$tmp/asked.json"
config negative '{"@label":"a","@type":"EventTimesSleepingProducer","eventTimes":[0.1,-2]}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f"]}'
expect 2 "negative time" "'a': eventTimes[1]: negative time -2" "$tmp/negative.json"
config unknown_key '{"@label":"a","@type":"FastProducer","colour":"red"}' '{"@label":"f","@type":"PassFilter"}' '{"p":["f"]}'
expect 2 "unknown key" "key 'colour' does not apply to type FastProducer" "$tmp/unknown_key.json"
expect 2 "missing file" "$tmp/none.json: cannot open" "$tmp/none.json"
simple=$configs/one_filter.json
expect 2 "cli: unknown option" "--frobnicate" "$simple" --frobnicate
expect 2 "cli: bad --wait" "--wait" "$simple" --wait nap
expect 2 "cli: zero threads" "--threads" "$simple" --threads 0
expect 2 "cli: no config" "config is required" --threads 2
expect 2 "unwritable --json" "/dev/null/r.json: cannot write" "$simple" --json /dev/null/r.json

# Every numeric option of every command, with a negative value, zero where it means nothing, a
# value past its range and text that is no number: exit 2 and the option named. (CLI11 alone reads
# "--events -3" as 2^64 - 3, a run without end.)
# bad_values COMMAND... -- OPTION VALUE... [-- OPTION VALUE...]: each value of each option in turn.
bad_values() {
  local command=() option=
  while [[ $1 != -- ]]; do command+=("$1"); shift; done
  while [[ $# -gt 0 ]]; do
    if [[ $1 == -- ]]; then option=$2; shift 2; continue; fi
    expect 2 "cli: ${command[0]} $option $1" "$option: expected" "${command[@]}" "$option" "$1"
    shift
  done
}
bad_values "$simple" -- --threads -1 0 4097 010x -- --events -3 0 18446744073709551616 1e3 \
  -- --first-event -1 18446744073709551616 010 \
  -- --events-in-flight -1 0 100000001 -- --events-per-run -2 0 -- --time-scale -1 0 nan 1e999 \
  -- --busy-wait-scale -5 0 inf -- --idle-spin-us -1 1000001
bad_values scan "$simple" --out "$tmp/scan-bad" -- --in-flight -1 0 1,-2 1000001 -- --threads -1 0 4097 \
  -- --events -3 0 -- --time-scale -1 0 inf -- --busy-wait-scale -1 nan -- --reps -1 0 1001 \
  -- --figure5-in-flight -1 0 1000001
bad_values generate -o "$tmp/gen-bad.json" -- --producers -1 9 100001 -- --events -3 0 -- --seed -1 18446744073709551616 \
  -- --time-scale -1 0 nan
bad_values calibrate -- --rounds -1 0 1001 -- --round-ms -5 0 60001
bad_values overhead "$simple" --json "$tmp/overhead-bad.json" -- --events -3 0 -- --threads -1 0 1,-2 4097 \
  -- --in-flight -1 0 1000001 -- --reps -1 0 1001
[[ ! -e $tmp/overhead-bad.json ]] || fail "overhead with a bad option wrote its output"
[[ ! -e $tmp/scan-bad && ! -e $tmp/gen-bad.json ]] || fail "a command with a bad option wrote its output"
# Decimal digits only: CLI11 would run "--threads 010" with 8 threads (octal).
expect 2 "cli: --threads 010" "--threads: expected a whole number from 1 to 4096, not '010' (no leading zeros)" "$simple" --threads 010

# The same settings from the file: a bad value fails naming the file and the key.
# setting NAME 'options' 'source': a small process with these options and source keys.
setting() {
  cat >"$tmp/$1.json" <<JSON
{"process":{"options":{$2},
 "source":{"@type":"demo::SimpleSource",$3},
 "producers":[{"@label":"a","@type":"FastProducer"}],
 "filters":[{"@label":"f","@type":"PassFilter","toGet":[{"label":"a","product":""}]}],
 "paths":{"p":["f"]}}}
JSON
}
options='"nSimultaneousEvents":2,"busyWaitScaleFactor":2e7' src='"iterations":20'
# with KEYS KEY VALUE: the keys with KEY set to VALUE (not repeated: a repeated key hides which is read).
with() {
  local keys
  keys=$(sed -E "s/\"$2\":[^,]*,?//; s/,$//" <<<"$1")
  echo "${keys:+$keys,}\"$2\":$3"
}
# At their limits they are good (the command line then asks for less of the costly ones).
setting good "$(with "$options" nThreads 4096),\"idleSpinUs\":1000000" "$(with "$src" eventsPerRun 1)"
timeout 120 "$bin" "$tmp/good.json" -q --threads 2 --idle-spin-us 50 >"$tmp/out" 2>"$tmp/err" ||
  fail "settings at their limits: $(cat "$tmp/err")"
for bad in "options nSimultaneousEvents -1 expected a count" "options nSimultaneousEvents 0 expected at least 1" \
           "options nSimultaneousEvents 100000001 expected at most 100000000" "options nThreads -2 expected a count" \
           "options nThreads 0 expected at least 1" "options nThreads 4097 expected at most 4096" \
           "options timeScale 0 expected a positive number" "options timeScale -1 expected a positive number" \
           "options busyWaitScaleFactor -1 expected a positive number" "options idleSpinUs -1 expected a count" \
           "options idleSpinUs 1000001 expected at most 1000000" "source iterations -3 expected a count" \
           "source iterations 0 expected at least 1" "source eventsPerRun 0 expected at least 1" \
           "source eventsPerRun -1 expected a count"; do
  read -r section key value why <<<"$bad"
  if [[ $section == options ]]; then
    setting "$key$value" "$(with "$options" "$key" "$value")" "$src"
  else
    setting "$key$value" "$options" "$(with "$src" "$key" "$value")"
  fi
  expect 2 "file: $key $value" "$tmp/$key$value.json: process.$section.$key: $why" "$tmp/$key$value.json"
done

# Luminosity blocks: the options' bad values, the keys' errors naming the key, and a run with lumis
# that reports them and keeps the checksum of the run without (the built-in modules make no lumi
# products).
bad_values "$simple" -- --events-per-lumi -2 0 x -- --concurrent-lumis -1 0 1000001
setting lumis_alone "$options" "$src,\"lumisPerRun\":3"
expect 2 "file: lumisPerRun alone" "process.source.lumisPerRun: needs eventsPerLumi" "$tmp/lumis_alone.json"
setting lumis_and_run "$options" "$src,\"eventsPerLumi\":2,\"lumisPerRun\":3,\"eventsPerRun\":6"
expect 2 "file: lumisPerRun with eventsPerRun" "process.source.lumisPerRun: give eventsPerRun or lumisPerRun" "$tmp/lumis_and_run.json"
setting no_lumis "$(with "$options" numberOfConcurrentLuminosityBlocks 0)" "$src"
expect 2 "file: no concurrent lumis" "process.options.numberOfConcurrentLuminosityBlocks: expected at least 1" "$tmp/no_lumis.json"
setting lumis "$(with "$options" numberOfConcurrentLuminosityBlocks 3)" "$src,\"eventsPerLumi\":3,\"lumisPerRun\":2"
if ! timeout 120 "$bin" "$tmp/lumis.json" -q --threads 2 >"$tmp/out" 2>"$tmp/err"; then
  fail "a run with lumis: $(cat "$tmp/err")"
else
  grep -qF "events            20 in 4 runs" "$tmp/out" || fail "lumis: runs of 2 lumis of 3 events: $(cat "$tmp/out")"
  grep -qF "lumis             7, 3 open at once" "$tmp/out" || fail "lumis: the report: $(cat "$tmp/out")"
  plain=$(timeout 120 "$bin" "$tmp/lumis.json" -q --single-threaded --events-per-lumi 1000 | grep checksum)
  [[ $plain == "$(grep checksum "$tmp/out")" ]] || fail "lumis changed the checksum: $plain, $(grep checksum "$tmp/out")"
fi

# Modules that throw: exit 1, the module's label and the event; both processors.
for single in "" --single-threaded; do
  expect 1 "throwing filter $single" "module 'veto' failed on event " "$configs/throwing_filter.json" --time-scale 1e-3 $single
  expect 1 "throwing producer $single" "module 'calibration' failed on event " "$configs/throwing_producer.json" --time-scale 1e-3 $single
done

# A good run: the report, the JSON, the timeline; threaded and single-threaded agree.
cfg=$configs/chain.json
if ! timeout 120 "$bin" "$cfg" --time-scale 1e-3 --events 200 --json "$tmp/r.json" --timeline "$tmp/t.csv" >"$tmp/out" 2>"$tmp/err"; then
  fail "good run failed: $(cat "$tmp/err")"
else
  for line in "events            200" "wall" "cpu" "events/s" "peak RSS" "OS threads" "checksum"; do
    grep -qF "$line" "$tmp/out" || fail "the report lacks '$line': $(cat "$tmp/out")"
  done
  python3 - "$tmp/r.json" "$tmp/t.csv" <<'PY' || fail "JSON or timeline not as documented"
import csv, json, sys
r = json.load(open(sys.argv[1]))
for key in ("events", "wall_s", "cpu_s", "events_per_s", "checksum", "peak_rss_bytes", "threads"):
    assert key in r, key
assert r["events"] == 200 and r["threads"] >= 2 and r["checksum"].startswith("0x"), r
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 200 * 6, len(rows)  # 6 modules run once for every event ("trigger" is on both paths)
assert all(float(x["start_s"]) <= float(x["end_s"]) for x in rows)
assert {x["label"] for x in rows} == {"hits", "tracks", "clusters", "trigger", "tracking", "calo"}
PY
  threaded=$(grep checksum "$tmp/out")
  single=$(timeout 120 "$bin" "$cfg" --time-scale 1e-3 --events 200 --single-threaded | grep checksum)
  [[ $threaded == "$single" ]] || fail "checksums differ: threaded '$threaded', single-threaded '$single'"
fi

# --first-event: past 2^64 - 1 with --events, exit 2 before any output is written; a job of 200
# events in runs of 70 and lumis of 9, split at 125 (inside a run and a lumi), on either processor:
# the second part has the whole job's runs from 2 on, and as chain.json makes no lumi or run
# products, the parts' checksums add up (mod 2^64) to the whole's.
expect 2 "--first-event past 2^64 - 1" "run options: first_event 18446744073709551615 + events 2 passes 2^64 - 1" \
  "$cfg" --first-event 18446744073709551615 --events 2 --json "$tmp/never.json"
[[ ! -e $tmp/never.json ]] || fail "--first-event past 2^64 - 1 wrote its JSON"
for single in "" --single-threaded; do
  split_ok=1
  for part in "whole --events 200" "a --events 125" "b --first-event 125 --events 75"; do
    read -ra words <<<"$part"
    name=${words[0]}
    if ! timeout 120 "$bin" "$cfg" --time-scale 1e-3 -q --events-per-run 70 --events-per-lumi 9 $single "${words[@]:1}" \
         --json "$tmp/split-$name.json" >"$tmp/split-$name.out" 2>"$tmp/err"; then
      fail "--first-event $single: $part failed: $(cat "$tmp/err")"
      split_ok=0
    fi
  done
  [[ $split_ok -eq 1 ]] || continue
  grep -qF "events            75 in 2 runs, from event 125" "$tmp/split-b.out" ||
    fail "--first-event $single: the report lacks its first event: $(cat "$tmp/split-b.out")"
  python3 - "$tmp" <<'PY' || fail "--first-event $single: the parts do not add up to the whole job"
import json, sys
w, a, b = (json.load(open(f"{sys.argv[1]}/split-{n}.json")) for n in ("whole", "a", "b"))
assert (w["first_event"], a["first_event"], b["first_event"]) == (0, 0, 125), (w, a, b)
assert [(r["run"], r["events"]) for r in b["runs"]] == [(2, 15), (3, 60)], b["runs"]
for key in ("checksum", "events_checksum"):
    assert (int(a[key], 16) + int(b[key], 16)) % 2**64 == int(w[key], 16), key
PY
done

# generate: a CMS-like configuration that runs, with equal checksums threaded and single-threaded.
if ! timeout 120 "$bin" generate --producers 60 --events 20 -o "$tmp/gen.json" >"$tmp/out" 2>"$tmp/err"; then
  fail "generate failed: $(cat "$tmp/err")"
else
  grep -qF "60 producers" "$tmp/out" || fail "generate's summary: $(cat "$tmp/out")"
  a=$(timeout 120 "$bin" "$tmp/gen.json" --time-scale 1e-3 -q | grep checksum)
  b=$(timeout 120 "$bin" "$tmp/gen.json" --time-scale 1e-3 -q --single-threaded | grep checksum)
  [[ -n $a && $a == "$b" ]] || fail "generated configuration: threaded '$a', single-threaded '$b'"
fi

# scan: CSV, JSON with the targets' ratios, and plots where matplotlib is there.
if ! timeout 300 "$bin" scan "$cfg" --events 12 --time-scale 1e-4 --reps 1 --in-flight 1,2 \
    --out "$tmp/scan" >"$tmp/out" 2>"$tmp/err"; then
  fail "scan failed: $(cat "$tmp/err")"
else
  python3 - "$tmp/scan" <<'PY' || fail "scan's outputs are not as documented"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/scan.csv")))
series = {r["series"] for r in rows}
assert series == {"single-threaded processor", "heddle, multi-threaded", "heddle, every module ThreadUnsafe",
                  "single-threaded processes"}, series
assert all(float(r["median_events_per_s"]) > 0 for r in rows), rows
r = json.load(open(f"{d}/scan.json"))["ratios"]
for k in ("speedup_1", "bound_1", "speedup_vs_bound_1", "unsafe_vs_single_1", "reentrant_vs_threads_x_single"):
    assert k in r, k
steps = list(csv.DictReader(open(f"{d}/modules_running.csv")))
assert steps and max(int(s["running"]) for s in steps) >= 1
PY
  if python3 -c "import matplotlib" 2>/dev/null; then
    [[ -s $tmp/scan/scan.png && -s $tmp/scan/modules_running.png ]] || fail "scan wrote no plots: $(cat "$tmp/err")"
  fi
fi
expect 2 "scan: missing file" "$tmp/none.json: cannot open" scan "$tmp/none.json"

# overhead: one line per processor, ns a module from the wall time and the executions counted.
if ! timeout 120 "$bin" overhead "$cfg" --events 50 --reps 2 --threads 1,2 --json "$tmp/overhead.json" \
    >"$tmp/out" 2>"$tmp/err"; then
  fail "overhead failed: $(cat "$tmp/err")"
else
  for line in "single-threaded processor" "threaded, 1 worker, 2 in flight" "threaded, 2 workers, 2 in flight"; do
    grep -qE "^  $line +[0-9.]+ \[" "$tmp/out" || fail "overhead's report lacks '$line': $(cat "$tmp/out")"
  done
  python3 - "$tmp/overhead.json" <<'PY' || fail "overhead's JSON is not as documented: $(cat "$tmp/overhead.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["events"] == 50 and r["module_executions"] > 0, r
assert [v["threads"] for v in r["variants"]] == [1, 1, 2], r
assert all(len(v["wall_s"]) == 2 and v["median_ns_per_module"] > 0 for v in r["variants"]), r
PY
fi
expect 2 "overhead: missing file" "$tmp/none.json: cannot open" overhead "$tmp/none.json"

# heddle-fw's options from the file: the report goes where "json" says, single-threaded.
sed 's|"nSimultaneousEvents": 4,|& "singleThreaded": true, "quiet": true, "json": "'"$tmp"'/from_file.json",|' \
  "$cfg" >"$tmp/options.json"
if ! timeout 120 "$bin" "$tmp/options.json" --time-scale 1e-3 --events 20 >"$tmp/out" 2>"$tmp/err"; then
  fail "options from the file: $(cat "$tmp/err")"
else
  grep -qF "single-threaded" "$tmp/out" || fail "singleThreaded in the file was not used: $(cat "$tmp/out")"
  [[ -s $tmp/from_file.json ]] || fail "json in the file wrote no report"
fi

# The CMS study's configurations, unchanged: its exception examples stop naming their module, its
# other examples and the real reconstruction jobs run. Each file is skipped, saying why, where it is
# absent: they lie beside the repository (../shared/data/cms), and a clone of the project lacks them.
# study NAME: true when the study's NAME is there; otherwise says that it is skipped.
study() {
  [[ -f $data/$1 ]] && return
  echo "SKIP: $data/$1 is absent: the CMS study's configurations are not part of the repository"
  return 1
}
for thrower in "filter_exception_config.json third" "producer_exception_config.json beta"; do
  read -r name label <<<"$thrower"
  study "examples/$name" || continue
  for single in "" --single-threaded; do
    expect 1 "the study's $name $single" "module '$label' failed on event " "$data/examples/$name" --time-scale 1e-3 $single
  done
done
for name in examples/simple_config.json examples/test_config.json examples/test_acquire_config.json \
            reco_minbias_busywait.json reco_hipileup_5_2_0_busywait_perfectIO.json; do
  study "$name" || continue
  if ! timeout 120 "$bin" "$data/$name" -q --time-scale 1e-4 --events 4 >"$tmp/out" 2>"$tmp/err"; then
    fail "the study's $name: $(cat "$tmp/err")"
  else
    grep -qE '^  events +4 in 1 run$' "$tmp/out" || fail "the study's $name: the report says $(cat "$tmp/out")"
  fi
done

timeout 60 "$bin" calibrate --rounds 3 --round-ms 20 >"$tmp/out" 2>&1 || fail "calibrate failed: $(cat "$tmp/out")"
grep -qE '^busyWaitScaleFactor [0-9.e+]+$' "$tmp/out" || fail "calibrate printed: $(cat "$tmp/out")"

# --trace FILE: an unwritable file fails before the run (one line, exit 2); a run's trace names its
# modules (heddle-trace's tests read such traces through).
expect 2 "unwritable --trace" "--trace: heddle::trace::start: cannot open /dev/null/t.json" \
  "$configs/chain.json" --events 4 -q --trace /dev/null/t.json
if ! timeout 120 "$bin" "$configs/chain.json" --events 20 --threads 2 -q --trace "$tmp/trace.json" >"$tmp/out" 2>"$tmp/err"; then
  fail "--trace run failed: $(cat "$tmp/err")"
else
  grep -q "heddle-fw: trace: $tmp/trace.json" "$tmp/err" || fail "--trace does not say where the trace went: $(cat "$tmp/err")"
  for part in '"traceEvents"' '"cat":"module"' '"cat":"event"' '"name":"begin run"'; do
    grep -qF -- "$part" "$tmp/trace.json" || fail "--trace file lacks $part"
  done
fi
# A run that fails still writes its trace: it shows where the run failed.
expect 1 "throwing filter, traced" "module 'veto' failed on event " "$configs/throwing_filter.json" --time-scale 1e-3 \
  --trace "$tmp/failed.json"
grep -q "heddle-fw: trace: $tmp/failed.json" "$tmp/err" || fail "a failed run's --trace does not say where the trace went: $(cat "$tmp/err")"
grep -qF '"name":"veto"' "$tmp/failed.json" 2>/dev/null || fail "a failed run's trace lacks the failing module 'veto'"

finish "heddle-fw CLI"
