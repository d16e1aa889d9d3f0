#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# heddle-fw with plugins (shared builds): the test plugins (tests/fw/plugins/) run from
# --plugin-path or HEDDLE_FW_PLUGIN_PATH on a configuration that names their types
# (plugins/values.json), with the same checksum in both processors; the cache is written beside
# them; a type nobody registers, and a type two plugins register, are one line on stderr and exit
# status 2. The plugin directories are copied into a scratch folder first (the caches are written
# there, not into the build tree).
#   tests/fw/heddle_fw_plugins.sh HEDDLE_FW TEST_PLUGINS_DIR
set -uo pipefail
bin=${1:?usage: heddle_fw_plugins.sh HEDDLE_FW TEST_PLUGINS_DIR}
plugins=${2:?usage: heddle_fw_plugins.sh HEDDLE_FW TEST_PLUGINS_DIR}
config=$(dirname "$0")/plugins/values.json
source "$(dirname "$0")/../tools/cli_support.sh"
unset HEDDLE_FW_PLUGIN_PATH

for d in good duplicate; do
  mkdir -p "$tmp/$d" && cp "$plugins/$d"/*.so "$tmp/$d/" || { fail "copying $plugins/$d"; finish heddle_fw_plugins; exit; }
done
good_lib=$tmp/good/libfw_test_plugin_good.so
duplicate_lib=$tmp/duplicate/libfw_test_plugin_duplicate.so

# run NAME args...: heddle-fw on the configuration, exit status 0, the report's checksum in $tmp/NAME.sum.
run() {
  local name=$1
  shift
  if ! timeout 120 "$bin" "$config" --quiet --json "$tmp/$name.json" "$@" >"$tmp/out" 2>"$tmp/err"; then
    fail "$name: exit status $? ($(head -c 300 "$tmp/err"))"
    return
  fi
  sed -n 's/^ *"checksum": "\(0x[0-9a-f]*\)",$/\1/p' "$tmp/$name.json" | head -1 >"$tmp/$name.sum"
  [[ -s $tmp/$name.sum ]] || fail "$name: no checksum in the JSON report"
  grep -q '"events": 100,' "$tmp/$name.json" || fail "$name: not 100 events: $(head -c 300 "$tmp/$name.json")"
}

run threaded --plugin-path "$tmp/good"
[[ -f $tmp/good/.heddle-fw-plugins ]] || fail "no cache written in $tmp/good"
grep -qF "fw_test_plugins::ValuesChecker	$good_lib" "$tmp/good/.heddle-fw-plugins" ||
  fail "the cache does not list the checker: $(cat "$tmp/good/.heddle-fw-plugins")"
run single --plugin-path "$tmp/good" --single-threaded
[[ $(cat "$tmp/threaded.sum") == "$(cat "$tmp/single.sum")" ]] ||
  fail "checksums differ: threaded $(cat "$tmp/threaded.sum"), single-threaded $(cat "$tmp/single.sum")"
HEDDLE_FW_PLUGIN_PATH=$tmp/absent:$tmp/good run environment
[[ $(cat "$tmp/environment.sum") == "$(cat "$tmp/threaded.sum")" ]] || fail "HEDDLE_FW_PLUGIN_PATH: another checksum"

# expect2 "what" "message part" args...: exit status 2, one line on stderr containing the part.
expect2() {
  local what=$1 message=$2
  shift 2
  timeout 120 "$bin" "$config" --quiet "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq 2 ]] || fail "$what: exit status $rc, expected 2 ($(head -c 300 "$tmp/err"))"
  grep -qF -- "$message" "$tmp/err" || fail "$what: stderr lacks '$message': $(cat "$tmp/err")"
  [[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "$what: expected one line on stderr, got: $(cat "$tmp/err")"
}
expect2 "no plugin path" "unknown module type 'fw_test_plugins::ValuesProducer'"
expect2 "two plugins, one name" "$good_lib and $duplicate_lib" --plugin-path "$tmp/good:$tmp/duplicate"
expect2 "two plugins, one name (two options)" "$duplicate_lib and $good_lib" --plugin-path "$tmp/duplicate" --plugin-path "$tmp/good"

finish heddle_fw_plugins
