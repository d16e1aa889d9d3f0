# SPDX-License-Identifier: Apache-2.0
"""What the heddle-trace tests share: running the tool, a scratch folder per test, traces written
from synthetic.py's builders."""
import argparse
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from synthetic import Builder, write

SOURCE_TOOL = Path(__file__).resolve().parents[3] / "tools" / "heddle-trace" / "heddle-trace"
# Set by trace_tool_test.py from its command line.
OPTIONS = argparse.Namespace(tool=str(SOURCE_TOOL), build_dir=None, cmake=None)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args, tool=None, env=None):
    """heddle-trace args, under this python3 (the one with the modules): (exit status, stdout, stderr)."""
    cmd = [sys.executable, tool or OPTIONS.tool, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stdout, p.stderr


class ToolTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="heddle-trace-test.")
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def trace(self, doc, name="trace.json"):
        return write(self.tmp / name, doc)

    def built(self, *builders, **kwargs):
        b = Builder()
        for build in builders:
            build(b, **kwargs)
        return b.doc()

    def summary(self, doc, *args):
        """summary --json's numbers for doc (and the tables printed beside them)."""
        path = self.trace(doc)
        out = self.tmp / "summary.json"
        rc, stdout, stderr = run("summary", path, "--json", out, *args)
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(stderr, "")
        with open(out, encoding="utf-8") as f:
            return json.load(f), stdout

    def no_traceback(self, stderr):
        self.assertNotIn("Traceback", stderr)
