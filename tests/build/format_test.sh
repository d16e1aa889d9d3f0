#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tree is formatted as .clang-format says and each source file has its SPDX line
# (scripts/format.sh --check); and the check itself, on a planted tree, names the files that are
# not and leaves the others alone, and scripts/format.sh then mends them.
#   tests/build/format_test.sh SOURCE_TREE
# Skipped (77) where scripts/format.sh cannot check: no clang-format-14, or no git checkout.
set -uo pipefail
root=${1:?usage: format_test.sh SOURCE_TREE}
format=$root/scripts/format.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/heddle-format.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The project's own tree.
"$format" --check --root "$root"
case $? in
  0) ;;
  77) exit 77 ;;  # format.sh said why
  *) fail "the tree is not formatted (above): run scripts/format.sh" ;;
esac

# A planted tree: what must be reported is, what is well is not.
tree=$tmp/tree
mkdir -p "$tree/src" "$tree/scripts"
cp "$root/.clang-format" "$tree/"
spdx='SPDX-License-Identifier: Apache-2.0'
printf '// %s\n// A file as it should be.\nint f(int x) { return x + 1; }\n' "$spdx" >"$tree/src/good.cpp"
printf '// %s\nint   g( int x ){return x+1;}\n' "$spdx" >"$tree/src/unformatted.cpp"
printf '// A header without its SPDX line.\n#pragma once\n' >"$tree/src/no_spdx.hpp"
printf '// %s\n// clang-format off\nint   table[] = { 1,   2,\n                  30, 4 };\n// clang-format on\n' "$spdx" >"$tree/src/off.hpp"
printf '#!/usr/bin/env bash\n# %s\necho good\n' "$spdx" >"$tree/scripts/good.sh"
printf '#!/usr/bin/env bash\n# no SPDX line\necho bad\n' >"$tree/scripts/no_spdx.sh"
printf 'cmake_minimum_required(VERSION 3.20)\n' >"$tree/CMakeLists.txt"
chmod +x "$tree/scripts/"*.sh
git -C "$tree" init -q && git -C "$tree" add -A || { fail "git init in $tree"; exit 1; }

"$format" --check --root "$tree" >"$tmp/out" 2>&1
rc=$?
((rc == 1)) || fail "the planted tree's check exits $rc, not 1: $(cat "$tmp/out")"
for bad in src/unformatted.cpp src/no_spdx.hpp scripts/no_spdx.sh CMakeLists.txt; do
  grep -qx "  $bad" "$tmp/out" || fail "a planted file is not reported: $bad (reported: $(cat "$tmp/out"))"
done
for good in src/good.cpp src/off.hpp scripts/good.sh; do
  grep -qx "  $good" "$tmp/out" && fail "a good file is reported: $good"
done
grep -q 'run scripts/format.sh' "$tmp/out" || fail "the check does not say how to fix: $(cat "$tmp/out")"

# The fix: format.sh mends every file, keeps a #! line first and the SPDX line second, keeps what
# is between clang-format off and on, and a second check passes.
cp "$tree/src/off.hpp" "$tmp/off.before"
"$format" --root "$tree" >"$tmp/apply" 2>&1 || fail "scripts/format.sh on the planted tree: $(cat "$tmp/apply")"
"$format" --check --root "$tree" >"$tmp/again" 2>&1 || fail "the planted tree after format.sh: $(cat "$tmp/again")"
[[ $(sed -n 1p "$tree/scripts/no_spdx.sh") == '#!/usr/bin/env bash' ]] || fail "the #! line is not line 1 any more"
[[ $(sed -n 2p "$tree/scripts/no_spdx.sh") == "# $spdx" ]] || fail "the SPDX line is not line 2 below a #! line"
[[ -x $tree/scripts/no_spdx.sh ]] || fail "a script lost its executable bit"
[[ $(sed -n 1p "$tree/src/no_spdx.hpp") == "// $spdx" ]] || fail "the SPDX line is not line 1 of a header"
[[ $(sed -n 2p "$tree/src/unformatted.cpp") == 'int g(int x) { return x + 1; }' ]] ||
  fail "a file is not formatted: $(cat "$tree/src/unformatted.cpp")"
cmp -s "$tmp/off.before" "$tree/src/off.hpp" || fail "what is between clang-format off and on was changed"

if ((failures)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "the tree is formatted and each file has its SPDX line; the check finds what it should"
