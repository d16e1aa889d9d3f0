# SPDX-License-Identifier: Apache-2.0
"""Never a traceback: heddle-trace's commands on a valid trace broken at random (a key deleted or
set to a value of another type, an event replaced, events swapped, otherData mangled) end with
exit status 0, 1 or 2, each run in this process for speed (the package from the source tree)."""
import contextlib
import copy
import io
import json
import random
import sys
import tempfile
import unittest
from pathlib import Path

import synthetic
from support import SOURCE_TOOL

__all__ = ["TestRobust"]

VALUES = [None, True, -1, 0, 2, 1.5, -2.5, 10 ** 20, 1e308, float("inf"), float("nan"), "", "x", "task", [], [1], {},
          {"a": 1}]
KEYS = ["ph", "pid", "tid", "ts", "dur", "name", "cat", "args", "id", "bp", "s"]


def value(rng):
    return copy.deepcopy(rng.choice(VALUES))  # a fresh list or object: the document shares none


def mutate(doc, rng):
    events = doc["traceEvents"]
    what = rng.randrange(6)
    i = rng.randrange(len(events))
    ev = events[i]
    if not isinstance(ev, dict):  # replaced by an earlier mutation
        events[i] = value(rng)
    elif what == 0:
        ev[rng.choice(KEYS)] = value(rng)
    elif what == 1:
        ev.pop(rng.choice(KEYS), None)
    elif what == 2 and isinstance(ev.get("args"), dict) and ev["args"]:
        ev["args"][rng.choice(sorted(ev["args"]))] = value(rng)
    elif what == 3:
        events[i] = value(rng)
    elif what == 4:
        j = rng.randrange(len(events))
        events[i], events[j] = events[j], events[i]
    else:
        other = doc["otherData"]
        key = rng.choice(["threads", "processes", "dropped", "records", "heddle_trace_version", None])
        if key is None or not isinstance(other, dict):
            doc["otherData"] = value(rng)
        elif rng.random() < 0.5 and isinstance(other.get(key), list) and other[key]:
            other[key][0] = value(rng) if rng.random() < 0.5 else {"pid": value(rng),
                                                                            "dropped": value(rng),
                                                                            "clock_uncertainty_us": value(rng)}
        else:
            other[key] = value(rng)


class TestRobust(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(SOURCE_TOOL.parent))
        from heddle_trace import cli
        cls.cli = cli

    def run_tool(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = self.cli.main([str(a) for a in argv])
        return rc, out.getvalue(), err.getvalue()

    def test_random_breakage(self):
        rng = random.Random(20240611)
        statuses = {"summary": set(), "validate": set(), "plot": set()}
        with tempfile.TemporaryDirectory(prefix="heddle-trace-robust.") as tmp:
            path = Path(tmp) / "trace.json"
            for round_ in range(240):
                doc = synthetic.everything(lone=True, dropped=True)
                for _ in range(rng.randint(1, 3)):
                    mutate(doc, rng)
                path.write_text(json.dumps(doc))
                commands = [["summary", path, "--json", Path(tmp) / "s.json"], ["validate", path]]
                if round_ % 12 == 0:  # plots are slow: every 12th
                    commands.append(["plot", path, "--out", Path(tmp) / "plots"])
                for argv in commands:
                    rc, out, err = self.run_tool(*argv)  # a traceback fails the test here
                    self.assertIn(rc, (0, 1, 2), (argv, out, err))
                    if rc == 2:
                        self.assertTrue(err.startswith(f"heddle-trace {argv[0]}: {path}"), err)
                    statuses[argv[0]].add(rc)
        # The mutations reach both outcomes: refused (2) and read (0); validate finds problems (1).
        self.assertEqual(statuses["summary"], {0, 2})
        self.assertIn(1, statuses["validate"])
