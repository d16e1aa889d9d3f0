#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Formats the C++ sources as .clang-format says (with clang-format-14, the version the style was
# tuned to: another version formats differently) and gives each source file its SPDX line.
#
# Usage: scripts/format.sh [--check] [--root DIR]
#   (nothing)  rewrites the files in place: the SPDX line where it is missing, then clang-format
#   --check    changes nothing: names each file that clang-format would change or that lacks its
#              SPDX line, and exits 1 if there is one (the ctest test build_format runs this)
#   --root     the tree to work on (default: this script's checkout)
# Exits 77 (ctest's "skipped") when it cannot work: clang-format-14 is not installed
# (scripts/install-deps.sh installs it) or the tree is not a git checkout.
#
# The files: those git knows of (tracked, and untracked ones not ignored), so a new file is
# formatted before its first commit. C++ (*.hpp *.cpp *.h *.cc *.c) is formatted; C++ and the
# *.hpp.in templates take `// SPDX-License-Identifier: Apache-2.0` as line 1; CMake, shell and
# Python files and the Makefile take `# SPDX-License-Identifier: Apache-2.0`, as line 2 below a
# `#!` line. Code that clang-format would spoil (a table, a construct clang-format 14 misreads)
# stays between `// clang-format off` and `// clang-format on`, with the reason on the line above.
set -euo pipefail

spdx_id='SPDX-License-Identifier: Apache-2.0'
clang_format=clang-format-14
check=0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
while (($#)); do
  case $1 in
    --check) check=1 ;;
    --root) root=${2:?--root needs a folder}; shift ;;
    *) echo "usage: scripts/format.sh [--check] [--root DIR]" >&2; exit 2 ;;
  esac
  shift
done

skip() {
  echo "format.sh: skipped: $*" >&2
  exit 77
}
command -v "$clang_format" >/dev/null 2>&1 || skip "$clang_format is not installed (scripts/install-deps.sh installs it)"
command -v git >/dev/null 2>&1 || skip "git is not installed"
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$root is not a git checkout"
cd "$root"
[[ -f .clang-format ]] || { echo "format.sh: error: no .clang-format in $root" >&2; exit 1; }
"$clang_format" --style=file --assume-filename=format.cpp --dump-config >/dev/null ||
  { echo "format.sh: error: $clang_format does not read $root/.clang-format (above)" >&2; exit 1; }

# The files, NUL-separated, with paths relative to the root.
files() { git ls-files -z --cached --others --exclude-standard -- "$@"; }
cxx=(':(glob)**/*.hpp' ':(glob)**/*.cpp' ':(glob)**/*.h' ':(glob)**/*.cc' ':(glob)**/*.c')
slash_spdx=("${cxx[@]}" ':(glob)**/*.hpp.in')
hash_spdx=(':(glob)**/CMakeLists.txt' ':(glob)**/*.cmake' ':(glob)**/*.cmake.in' ':(glob)**/*.sh' ':(glob)**/*.py'
           Makefile tools/heddle-trace/heddle-trace)

# Whether FILE has the SPDX line in the comment form PREFIX ("//" or "#"): line 1, or line 2
# below a "#!" line.
has_spdx() {
  local file=$1 prefix=$2 first second
  { IFS= read -r first || true; IFS= read -r second || true; } <"$file"
  [[ $first == "$prefix $spdx_id" ]] && return 0
  [[ $prefix == "#" && $first == '#!'* && $second == "$prefix $spdx_id" ]]
}
add_spdx() {
  local file=$1 prefix=$2 first
  IFS= read -r first <"$file" || true
  if [[ ! -s $file ]]; then
    printf '%s %s\n' "$prefix" "$spdx_id" >"$file"
  elif [[ $prefix == "#" && $first == '#!'* ]]; then
    sed -i "1a $prefix $spdx_id" "$file"  # GNU sed -i keeps the file's mode
  else
    sed -i "1i $prefix $spdx_id" "$file"
  fi
}

missing_slash=() missing_hash=()
while IFS= read -r -d '' f; do has_spdx "$f" "//" || missing_slash+=("$f"); done < <(files "${slash_spdx[@]}")
while IFS= read -r -d '' f; do has_spdx "$f" "#" || missing_hash+=("$f"); done < <(files "${hash_spdx[@]}")
missing=("${missing_slash[@]}" "${missing_hash[@]}")

if ((check)); then
  # clang-format names each file it would change ("FILE:LINE:COL: error: code should be
  # clang-formatted"); one error a file is enough. Batches of 64 files on two processes: the whole
  # tree in a few seconds.
  unformatted=$(files "${cxx[@]}" |
    xargs -0 -r -n 64 -P 2 "$clang_format" --style=file --dry-run -Werror --ferror-limit=1 2>&1 |
    sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u || true)
  status=0
  if [[ -n $unformatted ]]; then
    echo "format.sh: not formatted as .clang-format says ($clang_format):" >&2
    sed 's/^/  /' <<<"$unformatted" >&2
    status=1
  fi
  if ((${#missing[@]})); then
    echo "format.sh: without the line '// $spdx_id' (or '# ...' in CMake, shell and Python files):" >&2
    printf '  %s\n' "${missing[@]}" >&2
    status=1
  fi
  if ((status)); then
    echo "format.sh: to fix, run scripts/format.sh (it rewrites these files in place)" >&2
  else
    echo "every C++ file formatted as .clang-format says, and every source file with its SPDX line"
  fi
  exit "$status"
fi

for f in "${missing_slash[@]}"; do add_spdx "$f" "//"; done
for f in "${missing_hash[@]}"; do add_spdx "$f" "#"; done
files "${cxx[@]}" | xargs -0 -r -n 64 -P 2 "$clang_format" --style=file -i
echo "format.sh: formatted the C++ files; SPDX line added to ${#missing[@]} file(s)"
