#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of heddle-trace (tools/heddle-trace/), run as a user runs it, on synthetic traces
(synthetic.py) whose numbers are worked out by hand: summary's numbers exactly (through --json)
and its tables (summary_test.py), plot's PNGs (plot_test.py), validate on good traces and on each
broken rule (validate_test.py), merges of per-node traces (merge_test.py), bad input and the install
(cli_test.py).

usage: trace_tool_test.py [--tool HEDDLE_TRACE] [--build-dir DIR --cmake CMAKE] [unittest options]
  --tool: the heddle-trace to run (default: the source tree's); --build-dir and --cmake: run
  TestInstalled (cmake --install of the trace_tool component into a temporary prefix).
Exit 77: skipped, this python3 cannot import matplotlib or jsonschema."""
import argparse
import sys
import unittest
from pathlib import Path

try:
    import jsonschema  # noqa: F401  (validate needs it)
    import matplotlib  # noqa: F401  (plot needs it)
except ImportError as e:
    print(f"skipped: {sys.executable} cannot import {e.name} (apt-get install python3-matplotlib python3-jsonschema)")
    sys.exit(77)

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
import support  # noqa: E402
from cli_test import *  # noqa: E402,F401,F403
from merge_test import *  # noqa: E402,F401,F403
from plot_test import *  # noqa: E402,F401,F403
from robust_test import *  # noqa: E402,F401,F403
from summary_test import *  # noqa: E402,F401,F403
from validate_test import *  # noqa: E402,F401,F403

if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tool", default=support.OPTIONS.tool)
    parser.add_argument("--build-dir")
    parser.add_argument("--cmake")
    options, rest = parser.parse_known_args()
    support.OPTIONS.__dict__.update(vars(options))
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
