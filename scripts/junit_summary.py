#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads ctest's JUnit report (ctest --output-junit FILE) of one phase and prints what scripts/test.sh
and scripts/stress.sh need: the counts, the failed and the skipped tests by name, the slowest tests.

A ctest test that runs a whole GoogleTest suite (HEDDLE_TEST_GRANULARITY=suite, tests/gtest_suites.cmake:
its output says `Google Test filter = Suite.*` and its name ends with `Suite`) counts as the tests it
ran, each with its own outcome and time, read from GoogleTest's lines in the output that ctest kept
(scripts/test.sh keeps all of it). A test that started and never ended failed (the program died in
it: a sanitizer's report, a crash, ctest's timeout); a suite whose tests all passed but whose program
failed after them (LeakSanitizer at exit) counts one more failure, named after the suite.

Usage: junit_summary.py REPORT.xml PHASE [--slowest N]

Prints, one a line:
  counts PASSED FAILED SKIPPED
  failed PHASE: NAME            (one per failed test)
  skipped PHASE: NAME           (one per skipped test)
  slow SECONDS NAME             (the N slowest, slowest first; none without --slowest)
Exits 2, saying why, when the report is missing or not ctest's JUnit.
"""
import argparse
import re
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    """passed, failed or skipped, from ctest's status attribute and its child elements."""
    if case.find("failure") is not None or case.find("error") is not None or case.get("status") == "fail":
        return "failed"
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


FILTER = re.compile(r"^Note: Google Test filter = (\S+)\.\*$", re.M)
# "[       OK ] Suite.Test (12 ms)", "[  FAILED  ] Suite.Test/0, where GetParam() = 3 (5 ms)"; the
# closing list's "[  FAILED  ] Suite.Test" has no time and is not read.
RESULT = re.compile(r"^\[ +(OK|FAILED|SKIPPED) +\] ([^ ,]+)(?:, where .*)? \((\d+) ms\)$")
STARTED = re.compile(r"^\[ RUN +\] ([^ ]+)$")


def suite_tests(case, case_outcome):
    """[(name, outcome, seconds)] of the GoogleTest tests a suite test ran, or None if `case` is not
    one (a test alone, or no GoogleTest program at all)."""
    out = case.findtext("system-out") or ""
    name = case.get("name", "?")
    m = FILTER.search(out)
    if not m or not name.endswith(m.group(1)):
        return None
    prefix = name[: len(name) - len(m.group(1))]
    results, running = [], None
    for line in out.splitlines():
        if r := RESULT.match(line):
            results.append((prefix + r.group(2), {"OK": "passed", "FAILED": "failed", "SKIPPED": "skipped"}[r.group(1)],
                            int(r.group(3)) / 1000))
            running = None
        elif r := STARTED.match(line):
            running = r.group(1)
    if running is not None:
        results.append((f"{prefix}{running} (never finished: the program died or ctest stopped it)", "failed", 0.0))
    elif case_outcome == "failed" and all(o != "failed" for _, o, _ in results):
        results.append((f"{name} (the program failed after its tests: see its output)", "failed", 0.0))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("phase")
    ap.add_argument("--slowest", type=int, default=0)
    a = ap.parse_args()
    try:
        root = ET.parse(a.report).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"junit_summary: cannot read {a.report}: {e}", file=sys.stderr)
        return 2
    cases = root.iter("testcase")
    seen = {"passed": [], "failed": [], "skipped": []}
    times = []
    for c in cases:
        name = c.get("name", "?")
        tests = suite_tests(c, outcome(c))
        if tests is None:
            try:
                tests = [(name, outcome(c), float(c.get("time", "0")))]
            except ValueError:
                tests = [(name, outcome(c), 0.0)]
        for test, result, seconds in tests:
            seen[result].append(test)
            times.append((seconds, test))
    if not any(seen.values()):
        print(f"junit_summary: {a.report} holds no test case", file=sys.stderr)
        return 2
    print(f"counts {len(seen['passed'])} {len(seen['failed'])} {len(seen['skipped'])}")
    for name in seen["failed"]:
        print(f"failed {a.phase}: {name}")
    for name in seen["skipped"]:
        print(f"skipped {a.phase}: {name}")
    for t, name in sorted(times, reverse=True)[: a.slowest]:
        print(f"slow {t:.2f} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
