# SPDX-License-Identifier: Apache-2.0
# Sourced by the command-line tests (tests/tools/, tests/fw/): a scratch folder removed at exit,
# fail() to count a failure with its message, and finish NAME to print the count and set the
# exit status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

finish() {
  echo "$1: $failures failure(s)"
  [[ $failures -eq 0 ]]
}
