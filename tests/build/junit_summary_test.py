#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/junit_summary.py on JUnit reports written here the way ctest writes them: tests alone,
whole GoogleTest suites (tests/gtest_suites.cmake) whose tests pass, fail, skip, die half-way or
leak after the last one, a script test whose output holds another program's GoogleTest lines, and a
report that is not there. Exits non-zero, saying what differed, on the first wrong line."""
import os
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "junit_summary.py")


def gtest_output(filter_, lines):
    return "\n".join([f"Note: Google Test filter = {filter_}", "[==========] Running some tests."] + lines + [""])


def case(name, time, status, out, failed=False):
    inner = f"<system-out>{escape(out)}</system-out>"
    if failed:
        inner = f'<failure message="Failed"/>' + inner
    return f'<testcase name="{escape(name)}" classname="{escape(name)}" time="{time}" status="{status}">{inner}</testcase>'


REPORT = "".join([
    '<?xml version="1.0" encoding="UTF-8"?><testsuite name="(empty)" tests="7">',
    # A GoogleTest test alone (granularity `test`): one test, as ctest says.
    case("Future.VoidFuture", "0.5", "run", gtest_output("Future.VoidFuture", [
        "[ RUN      ] Future.VoidFuture", "[       OK ] Future.VoidFuture (3 ms)"])),
    # A suite whose tests pass, one skipped, one parameterised with a slow instance.
    case("Sort", "3.5", "run", gtest_output("Sort.*", [
        "[ RUN      ] Sort.Small", "[       OK ] Sort.Small (12 ms)",
        "[ RUN      ] Sort.NeedsFiles", "[  SKIPPED ] Sort.NeedsFiles (0 ms)",
        "[ RUN      ] Cases/Sort.Big/1", "[       OK ] Cases/Sort.Big/1 (3200 ms)"])),
    # A suite with a failed parameterised test, under a prefix (the second discovery of a program).
    case("timed_parking.LostWakeups", "1.0", "fail", gtest_output("LostWakeups.*", [
        "[ RUN      ] LostWakeups.None", "[       OK ] LostWakeups.None (100 ms)",
        "[ RUN      ] LostWakeups.Burst/2", "x.cpp:12: Failure",
        "[  FAILED  ] LostWakeups.Burst/2, where GetParam() = 4 (250 ms)",
        "[  FAILED  ] 1 test, listed below:", "[  FAILED  ] LostWakeups.Burst/2, where GetParam() = 4"]), failed=True),
    # A suite whose program died in its second test (a sanitizer's report).
    case("Queue", "0.3", "fail", gtest_output("Queue.*", [
        "[ RUN      ] Queue.Push", "[       OK ] Queue.Push (1 ms)",
        "[ RUN      ] Queue.Race", "WARNING: ThreadSanitizer: data race"]), failed=True),
    # A suite whose tests passed and whose program failed at exit (a leak).
    case("Pool", "0.2", "fail", gtest_output("Pool.*", [
        "[ RUN      ] Pool.Grow", "[       OK ] Pool.Grow (2 ms)", "[  PASSED  ] 1 test.",
        "ERROR: LeakSanitizer: detected memory leaks"]), failed=True),
    # A script test that runs a GoogleTest program of its own: one test, whatever its output holds.
    case("am_nodes_tcp_2", "4.0", "run", gtest_output("-PeerDeath.*", [
        "[ RUN      ] Nodes.A", "[       OK ] Nodes.A (1 ms)", "[ RUN      ] Nodes.B", "[       OK ] Nodes.B (1 ms)"])),
    # A test ctest did not run.
    '<testcase name="needs_shared" classname="needs_shared" time="0" status="notrun"><skipped/></testcase>',
    "</testsuite>",
])

EXPECTED = [
    "counts 7 3 2",
    "failed tsan: timed_parking.LostWakeups.Burst/2",
    "failed tsan: Queue.Race (never finished: the program died or ctest stopped it)",
    "failed tsan: Pool (the program failed after its tests: see its output)",
    "skipped tsan: Sort.NeedsFiles",
    "skipped tsan: needs_shared",
    "slow 4.00 am_nodes_tcp_2",
    "slow 3.20 Cases/Sort.Big/1",
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "ctest-junit.xml")
        with open(report, "w") as f:
            f.write(REPORT)
        got = subprocess.run([sys.executable, SCRIPT, report, "tsan", "--slowest", "2"], capture_output=True, text=True)
        if got.returncode != 0:
            print(f"junit_summary.py exited {got.returncode}: {got.stderr}")
            return 1
        lines = got.stdout.splitlines()
        # The failed lines in the report's order; the rest as listed.
        if sorted(lines) != sorted(EXPECTED) or [l for l in lines if l.startswith("failed")] != EXPECTED[1:4]:
            print("expected:\n  " + "\n  ".join(EXPECTED) + "\ngot:\n  " + "\n  ".join(lines))
            return 1
        missing = subprocess.run([sys.executable, SCRIPT, os.path.join(tmp, "none.xml"), "asan"], capture_output=True, text=True)
        if missing.returncode != 2 or "cannot read" not in missing.stderr:
            print(f"a missing report: exit {missing.returncode}, stderr {missing.stderr!r} (expected 2, 'cannot read')")
            return 1
    print("junit_summary: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
