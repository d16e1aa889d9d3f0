#!/usr/bin/env python3
"""Reads ctest's JUnit report (ctest --output-junit FILE) of one phase and prints what scripts/test.sh
and scripts/stress.sh need: the counts, the failed and the skipped tests by name, the slowest tests.

Usage: junit_summary.py REPORT.xml PHASE [--slowest N]

Prints, one a line:
  counts PASSED FAILED SKIPPED
  failed PHASE: NAME            (one per failed test)
  skipped PHASE: NAME           (one per skipped test)
  slow SECONDS NAME             (the N slowest, slowest first; none without --slowest)
Exits 2, saying why, when the report is missing or not ctest's JUnit.
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    """passed, failed or skipped, from ctest's status attribute and its child elements."""
    if case.find("failure") is not None or case.find("error") is not None or case.get("status") == "fail":
        return "failed"
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


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
        seen[outcome(c)].append(name)
        try:
            times.append((float(c.get("time", "0")), name))
        except ValueError:
            pass
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
