# SPDX-License-Identifier: Apache-2.0
"""heddle-trace's command line. Exit status: 0 done (validate: the trace is valid), 1 validate found
problems, 2 the command could not run (bad command line, a file that is no trace, a missing module)."""
import argparse
import json
import os
import sys

from .load import TraceError, load

MODULE_PACKAGES = {"matplotlib": "python3-matplotlib", "jsonschema": "python3-jsonschema"}


def positive(text):
    try:
        value = int(text, 10)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 up, not {text!r}")
    return value


def parser():
    p = argparse.ArgumentParser(prog="heddle-trace", description="Summaries, plots and checks of heddle's "
                                "trace files (Chrome trace-event JSON; docs/trace.md).")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("summary", help="time per thread, top task labels and modules, latencies, queues, messages")
    s.add_argument("trace", metavar="TRACE")
    s.add_argument("--top", type=positive, default=10, metavar="N", help="rows of the label tables (default 10)")
    s.add_argument("--json", metavar="FILE", help="also write the numbers as JSON to FILE ('-': to stdout, no tables)")
    s.set_defaults(run=run_summary)
    p_ = sub.add_parser("plot", help="timeline.png, streams.png (framework streams), utilisation.png")
    p_.add_argument("trace", metavar="TRACE")
    p_.add_argument("--out", required=True, metavar="DIR", help="folder for the PNGs (made if missing)")
    p_.add_argument("--bins", type=positive, default=200, metavar="N", help="time bins of utilisation.png (default 200)")
    p_.set_defaults(run=run_plot)
    v = sub.add_parser("validate", help="check the file against the schema and the rules between events")
    v.add_argument("trace", metavar="TRACE")
    v.set_defaults(run=run_validate)
    m = sub.add_parser("merge", help="the traces of a run's processes (nodes, MPI ranks) as one trace")
    m.add_argument("out", metavar="OUT")
    m.add_argument("traces", metavar="TRACE", nargs="+")
    m.set_defaults(run=run_merge)
    return p


def run_summary(args):
    from . import report, summary
    numbers = summary.summarize(load(args.trace), args.top)
    if args.json == "-":
        json.dump(numbers, sys.stdout, indent=1)
        print()
        return 0
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(numbers, f, indent=1)
        except OSError as e:
            raise TraceError(f"{args.json}: cannot write: {e.strerror}") from None
    sys.stdout.write(report.render(numbers))
    return 0


def run_plot(args):
    from .plot import plot
    trace = load(args.trace)
    try:
        written = plot(trace, args.out, args.bins)
    except OSError as e:
        raise TraceError(f"{args.out}: cannot write the plots: {e.strerror or e}") from None
    for path in written:
        print(path)
    return 0


def run_validate(args):
    from .validate import validate
    problems = validate(args.trace)
    for _, text in problems:
        print(text)
    if problems:
        print(f"{args.trace}: {len(problems)} problem{'s' if len(problems) != 1 else ''}")
        return 1
    print(f"{args.trace}: valid")
    return 0


def run_merge(args):
    from .merge import merge
    processes, paired, lone = merge(args.out, args.traces)
    print(f"{args.out}: {processes} process{'es' if processes != 1 else ''}, {paired} message{'s' if paired != 1 else ''} "
          f"paired across them" + (f", {lone} without their other end (dropped)" if lone else ""))
    return 0


def rerun_with(python, script, argv):
    """Runs the command again under python (one that CMake found with matplotlib and jsonschema, or
    $HEDDLE_TRACE_PYTHON) when this interpreter lacks a module: the `python3` first in PATH is often
    not the one the Debian packages belong to. Returns only if it cannot."""
    python = os.environ.get("HEDDLE_TRACE_PYTHON") or python
    if not python or not script or os.environ.get("HEDDLE_TRACE_RERUN") or not os.access(python, os.X_OK):
        return
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        return
    os.environ["HEDDLE_TRACE_RERUN"] = "1"  # once: the other python may lack it too
    sys.stdout.flush()
    os.execv(python, [python, script, *argv])


def main(argv, script=None, python=None):
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except TraceError as e:
        print(f"heddle-trace {args.command}: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if e.name not in MODULE_PACKAGES:
            raise
        rerun_with(python, script, argv)
        print(f"heddle-trace {args.command}: needs the Python module {e.name}, which {sys.executable} cannot import "
              f"(apt-get install {MODULE_PACKAGES[e.name]}, or set HEDDLE_TRACE_PYTHON to a python3 that has it)",
              file=sys.stderr)
        return 2
    except BrokenPipeError:
        # stdout closed early (heddle-trace summary T | head): not an error; silence the flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
