# SPDX-License-Identifier: Apache-2.0
"""heddle-trace validate: the good traces pass; each broken rule (schema, order, nesting, B/E,
flows, names) is reported with its event's index, pid, tid and name, and exit status 1."""
import copy
import sys
import unittest

import synthetic
from support import SOURCE_TOOL, ToolTest, run
from synthetic import Builder

__all__ = ["TestValidate", "TestSchemaShapes"]


def index_of(b, ev):
    return next(i for i, e in enumerate(b.events) if e is ev)


class TestValidate(ToolTest):
    def check(self, doc):
        """validate's (exit status, problem lines) for doc."""
        path = self.trace(doc)
        rc, stdout, stderr = run("validate", path)
        self.assertEqual(stderr, "")
        lines = stdout.splitlines()
        self.assertTrue(lines[-1].startswith(path + ": "), stdout)
        return rc, lines[:-1]

    def assertProblems(self, doc, *expected):
        """validate exits 1 and prints exactly the expected problems (in file order)."""
        rc, problems = self.check(doc)
        self.assertEqual(rc, 1, problems)
        self.assertEqual(len(problems), len(expected), "\n".join(problems))
        for line, want in zip(problems, expected):
            self.assertIn(want, line)

    def app(self):
        """synthetic.shares (valid) and fresh threads 13 and 14 to break rules on."""
        b = Builder()
        synthetic.shares(b)
        b.thread(1, 13, "worker 2")
        b.thread(1, 14, "worker 3")
        return b

    def test_good_traces(self):
        for name, doc in [("everything", synthetic.everything(dropped=True)), ("shares", self.built(synthetic.shares)),
                          ("modules", self.built(synthetic.modules)), ("messages", self.built(synthetic.messages))]:
            rc, problems = self.check(doc)
            self.assertEqual((rc, problems), (0, []), name)
        path = self.trace(synthetic.everything())
        self.assertEqual(run("validate", path)[1], f"{path}: valid\n")

    def test_timestamps_go_back(self):
        b = self.app()
        last = max(i for i, e in enumerate(b.events) if e["tid"] == 11)  # worker 1's E at 2000
        back = b.i(1, 11, 1900, "worker", "wake", worker=0)
        self.assertProblems(b.doc(), f"event #{index_of(b, back)} (ph i, pid 1, tid 11, 'wake'): ts 1900 µs is earlier "
                                     f"than the ts 2000 µs of event #{last} before it on this thread")

    def test_spans_overlap_without_nesting(self):
        b = self.app()
        a = b.x(1, 13, 0, 100, "task", "a")
        c = b.x(1, 13, 50, 100, "task", "c")
        self.assertProblems(b.doc(), f"event #{index_of(b, c)} (ph X, pid 1, tid 13, 'c'): span 50 µs–150 µs overlaps "
                                     f"span 'a' (event #{index_of(b, a)}, 0 µs–100 µs) without nesting in it")
        # Touching and nested (the same start, the encloser first) spans are fine.
        b = self.app()
        b.x(1, 13, 0, 100, "task", "a")
        b.x(1, 13, 0, 100, "user", "inner")
        b.x(1, 13, 100, 0, "task", "empty")
        b.x(1, 13, 100.001, 2.002, "task", "ns")  # 100.001 + 2.002 > 102.003 in floating point
        b.x(1, 13, 100.001, 2.002, "user", "ns inside")
        self.assertEqual(self.check(b.doc()), (0, []))

    def test_times_print_in_full(self):
        """Timestamps since boot are large: 100 days in µs, with ns, print exactly."""
        b = self.app()
        a = b.x(1, 13, 8640000000.123, 1, "task", "a")
        c = b.x(1, 13, 8640000000.5, 1, "task", "c")
        self.assertProblems(b.doc(), f"event #{index_of(b, c)} (ph X, pid 1, tid 13, 'c'): span 8640000000.5 µs–"
                                     f"8640000001.5 µs overlaps span 'a' (event #{index_of(b, a)}, 8640000000.123 µs–"
                                     "8640000001.123 µs) without nesting in it")

    def test_b_and_e_balance(self):
        b = self.app()
        begin = b.b(1, 13, 10, kind="idle")
        self.assertProblems(b.doc(), f"event #{index_of(b, begin)} (ph B, pid 1, tid 13, 'parked'): B without its E")
        b = self.app()
        end = b.e(1, 13, 10)
        self.assertProblems(b.doc(), f"event #{index_of(b, end)} (ph E, pid 1, tid 13, 'parked'): E without a B open")
        b = self.app()
        b.b(1, 13, 10, kind="idle")
        end = b.e(1, 13, 20, name="sleep")
        self.assertProblems(b.doc(), f"event #{index_of(b, end)} (ph E, pid 1, tid 13, 'sleep'): E named 'sleep' ends B 'parked'")

    def test_b_and_e_nest_with_spans(self):
        b = self.app()
        b.b(1, 13, 0, kind="waiting")
        inner = b.x(1, 13, 10, 100, "task", "inner")
        end = b.e(1, 13, 50)
        self.assertProblems(b.doc(), f"event #{index_of(b, end)} (ph E, pid 1, tid 13, 'parked'): ends B 'parked' "
                                     f"(event #{index_of(b, end) - 2}) while span 'inner' (event #{index_of(b, inner)})")
        b = self.app()
        outer = b.x(1, 13, 0, 100, "worker", "wait")
        b.b(1, 13, 50, kind="waiting")
        end = b.e(1, 13, 150)
        self.assertProblems(b.doc(), f"event #{index_of(b, end)} (ph E, pid 1, tid 13, 'parked'): B 'parked' (event "
                                     f"#{index_of(b, end) - 1}) ends after span 'wait' (event #{index_of(b, outer)})")

    def test_flow_without_its_end(self):
        b = Builder()
        synthetic.successors(b, lone=True)
        lone = next(e for e in b.events if e.get("id") == 4)
        self.assertProblems(b.doc(), f"event #{index_of(b, lone)} (ph s, pid 3, tid 20, 'successor'): flow start "
                                     "without its end (no f with cat, name and id ('flow', 'successor', 4))")
        b = self.app()
        f = b.f(1, 13, 10, "successor", 9)
        self.assertProblems(b.doc(), f"event #{index_of(b, f)} (ph f, pid 1, tid 13, 'successor'): flow end without its start")
        # The same id with another name is another flow.
        b = self.app()
        b.s(1, 13, 10, "successor", 9)
        f = b.f(1, 12, 1900, "queue item", 9)
        self.assertProblems(b.doc(), "flow start without its end", f"event #{index_of(b, f)} (ph f, pid 1, tid 12, "
                                                                    "'queue item'): flow end without its start")

    def test_flow_end_before_start(self):
        b = self.app()
        s = b.s(1, 13, 100, "successor", 9)
        f = b.f(1, 14, 100, "successor", 9)
        self.assertEqual(self.check(b.doc()), (0, []))
        f["ts"] = 50
        self.assertProblems(b.doc(), f"event #{index_of(b, f)} (ph f, pid 1, tid 14, 'successor'): flow end at 50 µs "
                                     f"is earlier than its start at 100 µs (event #{index_of(b, s)})")

    def test_flow_across_processes_within_clock_uncertainty(self):
        """Node 1's f of message 1 at 15 µs: earlier than its s at 10 + 7 by 2 µs is the clocks'
        stated uncertainty (0.5 + 1.5): accepted; by 2.001 µs: reported."""
        for s_ts, valid in ((17, True), (17.001, False)):
            b = Builder()
            synthetic.messages(b)
            s = next(e for e in b.events if e["ph"] == "s" and e["id"] == 1)
            s["ts"] = s_ts
            b.events = [e for e in b.events if not (e["ph"] == "i" and e["ts"] == 10)]  # keep node 0's ts in order
            rc, problems = self.check(b.doc())
            self.assertEqual(rc == 0, valid, problems)
            if not valid:
                self.assertEqual(len(problems), 1)
                self.assertIn("flow end at 15 µs is earlier than its start at 17.001 µs", problems[0])

    def test_metadata_names(self):
        b = Builder()
        synthetic.shares(b)
        b.events = [e for e in b.events if e.get("args") != {"name": "worker 1"}]
        first = next(i for i, e in enumerate(b.events) if e["ph"] != "M" and e["tid"] == 11)
        self.assertProblems(b.doc(), f"event #{first} (ph X, pid 1, tid 11, 'A'): no thread_name metadata for pid 1 tid 11")
        b = Builder()
        synthetic.shares(b)
        b.events = [e for e in b.events if e["name"] != "process_name"]
        self.assertProblems(b.doc(), "event #3 (ph X, pid 1, tid 10, 'A'): no process_name metadata for pid 1")

    def test_schema(self):
        cases = [  # (change to one event, what the problem says)
            (lambda e: e.pop("dur"), "schema: 'dur' is a required property"),
            (lambda e: e.update(ph="Q"), "schema: ph: 'Q' is not one of ['X', 'B', 'E', 'i', 's', 'f', 'M']"),
            (lambda e: e.update(pid="1"), "schema: pid: '1' is not of type 'integer'"),
            (lambda e: e.update(ts=-1), "schema: ts: -1 is less than the minimum of 0"),
            (lambda e: e.update(args={"how": "bogus"}), "schema: args.how: 'bogus' is not one of"),
            (lambda e: e.update(ts=float("nan")), "has no ts in µs up to 1e+15"),  # the schema lets nan by
            (lambda e: e.update(ts=1e300), "has no ts in µs up to 1e+15"),
        ]
        for change, message in cases:
            b = self.app()
            ev = b.x(1, 13, 10, 5, "task", "t")
            change(ev)
            rc, problems = self.check(b.doc())
            self.assertEqual((rc, len(problems)), (1, 1), problems)
            self.assertTrue(problems[0].startswith(f"event #{index_of(b, ev)} ("), problems)
            self.assertIn(message, problems[0])
        b = self.app()
        f = b.f(1, 12, 1900, "successor", 9)
        b.s(1, 13, 10, "successor", 9)
        del f["bp"]
        self.assertProblems(b.doc(), f"event #{index_of(b, f)} (ph f, pid 1, tid 12, 'successor'): schema: 'bp' is a required property")
        doc = self.built(synthetic.shares)
        doc["otherData"]["dropped"] = -1
        doc["traceEvents"].append(["not an event"])
        self.assertProblems(doc, "otherData.dropped: schema: -1 is less than the minimum of 0",
                            f"event #{len(doc['traceEvents']) - 1}: schema: ['not an event'] is not of type 'object'")

    def test_every_problem_listed(self):
        b = self.app()
        b.x(1, 13, 0, 100, "task", "a")
        b.x(1, 13, 50, 100, "task", "c")
        b.b(1, 13, 200)
        b.s(1, 13, 300, "successor", 9)
        rc, problems = self.check(b.doc())
        self.assertEqual(rc, 1)
        self.assertEqual(len(problems), 3, problems)
        path = self.trace(b.doc())
        self.assertTrue(run("validate", path)[1].endswith(f"{path}: 3 problems\n"))


class TestSchemaShapes(unittest.TestCase):
    """validate checks the schema once per event shape (heddle_trace/schema.py): an event differing
    from a valid one in anything the schema looks at is checked anew; one differing only in what it
    ignores (a label, a time) is not."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(SOURCE_TOOL.parent))
        from heddle_trace import schema
        cls.schema = schema

    def test_shapes(self):
        checker = self.schema.EventChecker(self.schema.load_schema())
        self.assertIsNotNone(checker.named)
        good = {"ph": "X", "pid": 1, "tid": 2, "ts": 5.5, "dur": 2, "cat": "task", "name": "a",
                "args": {"how": "loop", "stolen_from": 2}}
        self.assertEqual(checker.problems(good), [])
        alike = copy.deepcopy(good)
        alike.update(ts=7.25, dur=3, name="b", tid=9)
        alike["args"]["stolen_from"] = 4
        self.assertEqual(checker.problems(alike), [])
        self.assertEqual(len(checker.valid_shapes), 1)  # one shape: checked once
        changes = {  # each: one schema-visible difference, and the path of the problem it makes
            "negative ts": (lambda e: e.update(ts=-0.5), ["ts"]),
            "float pid": (lambda e: e.update(pid=1.5), ["pid"]),
            "string pid": (lambda e: e.update(pid="1"), ["pid"]),
            "no dur": (lambda e: e.pop("dur"), []),
            "unknown how": (lambda e: e["args"].update(how="loops"), ["args", "how"]),
            "negative stolen_from": (lambda e: e["args"].update(stolen_from=-1), ["args", "stolen_from"]),
            "nan ts": (lambda e: e.update(ts=float("nan")), None),  # nan >= 0 is false: jsonschema lets it by
        }
        for what, (change, path) in changes.items():
            bad = copy.deepcopy(good)
            change(bad)
            problems = checker.problems(bad)
            self.assertEqual(problems, checker.errors(bad), what)
            if path is not None:
                self.assertEqual([p for p, _ in problems], [path], what)
        self.assertEqual(checker.problems({**good, "ts": 0}), [])  # 0 is the minimum: allowed, another shape

    def test_other_keywords_check_every_event(self):
        schema = self.schema.load_schema()
        schema["definitions"]["event"]["properties"]["name"]["maxLength"] = 3
        checker = self.schema.EventChecker(schema)
        self.assertIsNone(checker.named)
        event = {"ph": "i", "pid": 1, "tid": 2, "ts": 5, "cat": "user", "name": "abc"}
        self.assertEqual(checker.problems(event), [])
        self.assertEqual([p for p, _ in checker.problems({**event, "name": "abcd"})], [["name"]])
