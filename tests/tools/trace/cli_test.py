# SPDX-License-Identifier: Apache-2.0
"""heddle-trace's command line: bad input gives a message naming the file and exit status 2, never a
traceback; the script runs by its shebang; a missing module is named; the installed layout works."""
import os
import shutil
import stat
import subprocess
import sys
import unittest
from pathlib import Path

import synthetic
from support import OPTIONS, ToolTest, run

__all__ = ["TestBadInput", "TestLaunch", "TestInstalled"]


class TestBadInput(ToolTest):
    def expect_error(self, path, message, commands=("summary", "plot", "validate")):
        for command in commands:
            args = [command, path] + (["--out", self.tmp / "plots"] if command == "plot" else [])
            rc, stdout, stderr = run(*args)
            self.assertEqual(rc, 2, f"{command}: {stdout}{stderr}")
            self.assertEqual(stdout, "", command)
            self.assertIn(message, stderr, command)
            self.assertTrue(stderr.startswith(f"heddle-trace {command}: "), stderr)
            self.no_traceback(stderr)

    def write(self, text, name="bad.json"):
        path = self.tmp / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    def test_missing_file(self):
        path = str(self.tmp / "nothing.json")
        self.expect_error(path, f"{path}: cannot read: No such file or directory")

    def test_folder(self):
        self.expect_error(str(self.tmp), f"{self.tmp}: cannot read: Is a directory")

    def test_not_json(self):
        path = self.write('{\n  "traceEvents": [\n    {"ph": "X",,}\n  ]\n}\n')
        self.expect_error(path, f"{path}:3:16: not JSON: Expecting property name enclosed in double quotes")
        self.expect_error(self.write(""), "bad.json:1:1: not JSON: Expecting value")
        latin = self.tmp / "latin.json"
        latin.write_bytes(b'{"traceEvents":\n ["caf\xe9"]}')
        self.expect_error(str(latin), "latin.json:2:7: not JSON: not UTF-8 text")

    def test_not_a_trace(self):
        self.expect_error(self.write('{"otherData": {}}'), "bad.json: not a trace: no traceEvents")
        self.expect_error(self.write('{"traceEvents": {}}'), "not a trace: traceEvents is a JSON object, not an array")
        self.expect_error(self.write("[1, 2]"), "not a trace: the top level is a JSON array, not an object with traceEvents")

    def test_summary_and_plot_refuse_a_broken_event(self):
        doc = self.built(synthetic.shares)
        doc["traceEvents"][5].pop("dur")
        path = self.trace(doc)
        self.expect_error(path, f"{path}: event #5 is an X without a dur in µs from 0 to 1e+15 (heddle-trace validate "
                          "lists every problem)", commands=("summary", "plot"))

    def test_bad_options(self):
        path = self.trace(self.built(synthetic.shares))
        for args in (["summary", path, "--top", "0"], ["summary", path, "--top", "x"], ["plot", path],
                     ["frobnicate", path], [], ["plot", path, "--out", self.tmp, "--bins", "-1"]):
            rc, stdout, stderr = run(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("usage: heddle-trace", stderr, args)
            self.no_traceback(stderr)

    def test_json_not_writable(self):
        path = self.trace(self.built(synthetic.shares))
        rc, stdout, stderr = run("summary", path, "--json", self.tmp / "no" / "such" / "s.json")
        self.assertEqual(rc, 2)
        self.assertIn("s.json: cannot write: No such file or directory", stderr)
        self.no_traceback(stderr)


class TestLaunch(ToolTest):
    def test_runs_by_its_shebang(self):
        """As a user types it: the python3 first in PATH may lack matplotlib (pyenv's does here);
        a built or installed copy then runs again with the python3 CMake found."""
        tool = Path(OPTIONS.tool)
        if "@HEDDLE_TRACE_PYTHON@" in tool.read_text(encoding="utf-8"):
            self.skipTest(f"{tool} is the source tree's script: no python3 configured to fall back on")
        self.assertTrue(os.access(tool, os.X_OK), f"{tool} is not executable")
        path = self.trace(self.built(synthetic.shares))
        p = subprocess.run([str(tool), "validate", path], capture_output=True, text=True, timeout=300)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, f"{path}: valid\n", ""))
        out = self.tmp / "plots"
        p = subprocess.run([str(tool), "plot", path, "--out", out], capture_output=True, text=True, timeout=300)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, f"{out}/timeline.png\n{out}/utilisation.png\n", ""))

    def blocked(self, module, env):
        """validate under this python3 with module made unimportable, as on a python3 without it."""
        code = (f"import sys; sys.modules[{module!r}] = None; sys.argv = [{OPTIONS.tool!r}, 'validate', "
                f"{self.trace(self.built(synthetic.shares))!r}]; __file__ = sys.argv[0]; "
                "exec(compile(open(__file__).read(), __file__, 'exec'))")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                              env={**os.environ, **env})

    def test_missing_module_named(self):
        p = self.blocked("jsonschema", {"HEDDLE_TRACE_RERUN": "1"})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"heddle-trace validate: needs the Python module jsonschema, which {sys.executable} cannot import "
                      "(apt-get install python3-jsonschema", p.stderr)
        self.no_traceback(p.stderr)

    def test_missing_module_runs_again_with_another_python(self):
        other = self.tmp / "python3"  # another path (a script, not a link: realpath tells them apart)
        other.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
        other.chmod(other.stat().st_mode | stat.S_IXUSR)
        p = self.blocked("jsonschema", {"HEDDLE_TRACE_PYTHON": str(other)})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.endswith(": valid\n"), p.stdout)


class TestInstalled(ToolTest):
    """cmake --install of the trace_tool component into a scratch prefix: the installed script finds
    its package and schema, away from the source tree."""

    def test_installed_tool(self):
        if not (OPTIONS.build_dir and OPTIONS.cmake):
            raise unittest.SkipTest("no --build-dir and --cmake given")
        prefix = self.tmp / "prefix"
        p = subprocess.run([OPTIONS.cmake, "--install", OPTIONS.build_dir, "--prefix", str(prefix), "--component",
                            "trace_tool"], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        tool = prefix / "bin" / "heddle-trace"
        self.assertTrue(os.access(tool, os.X_OK))
        moved = self.tmp / "moved"  # the prefix moved elsewhere still works: the paths are relative
        shutil.move(str(prefix), str(moved))
        tool = moved / "bin" / "heddle-trace"
        path = self.trace(synthetic.everything(dropped=True))
        rc, stdout, stderr = run("validate", path, tool=str(tool))
        self.assertEqual((rc, stdout, stderr), (0, f"{path}: valid\n", ""))
        rc, stdout, stderr = run("summary", path, "--json", "-", tool=str(tool))
        self.assertEqual(rc, 0, stderr)
        self.assertIn('"dropped"', stdout)
        self.assertEqual([p.name for p in moved.rglob("__pycache__")], [])
