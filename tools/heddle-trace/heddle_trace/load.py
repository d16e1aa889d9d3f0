# SPDX-License-Identifier: Apache-2.0
"""Reading a trace file into events the other modules can trust.

Times become integer nanoseconds here (the file's µs floats have ns resolution): sums, nesting
tests and percentiles are then exact, and 1.001 + 2.002 never ends after 3.003."""
import json
import math
import re
from dataclasses import dataclass, field

PHASES = ("X", "B", "E", "i", "s", "f", "M")
SYNTHETIC_TID_BASE = 1 << 30  # tracks that are no thread (lanes, streams) have tids from here on
STREAM_NAME = re.compile(r"stream (\d+)")  # a framework stream's track; its module lanes are not
MAX_US = 1e15  # 31 years: no steady clock since boot gets there, and ns of it still fit a double exactly
WORKER_NAME = re.compile(r"(runtime \d+ )?worker \d+")  # a runtime's worker threads


class TraceError(Exception):
    """The file cannot be read as a trace: the message names the file and what is wrong."""


def read_document(path):
    """The file's JSON object, with traceEvents a list; TraceError otherwise (a file that is not
    there or not readable, JSON errors with line:column, a JSON value that is no trace)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line, column = data.count(b"\n", 0, e.start) + 1, e.start - data.rfind(b"\n", 0, e.start)
        raise TraceError(f"{path}:{line}:{column}: not JSON: not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    except RecursionError:
        raise TraceError(f"{path}: not a trace: JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise TraceError(f"{path}: not a trace: the top level is a JSON {json_type(doc)}, not an object with traceEvents")
    if "traceEvents" not in doc:
        raise TraceError(f"{path}: not a trace: no traceEvents")
    if not isinstance(doc["traceEvents"], list):
        raise TraceError(f"{path}: not a trace: traceEvents is a JSON {json_type(doc['traceEvents'])}, not an array")
    return doc


def json_type(value):
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def to_ns(us):
    return int(round(us * 1000))


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v):
    return is_int(v) or (isinstance(v, float) and math.isfinite(v))  # JSON's 1e999 reads as inf


def is_time(v):
    """A ts or dur the analysis can take: a number of µs, |v| <= MAX_US (1e308 * 1000 overflows)."""
    return is_number(v) and abs(v) <= MAX_US


@dataclass(eq=False, slots=True)  # slots: a million events in half the memory
class Event:
    """One record: index is its place in traceEvents (what problems and errors name)."""
    index: int
    ph: str
    pid: int
    tid: int
    ts: int  # ns
    dur: int  # ns, 0 unless X
    cat: str
    name: str
    args: dict
    id: object = None

    def describe(self):
        return f"event #{self.index} (ph {self.ph}, pid {self.pid}, tid {self.tid}, {self.name!r})"


def event_problem(i, raw):
    """Why raw cannot be read as an event (the fields the analysis uses, with their types), or
    None. The schema (validate) checks more; this keeps summary and plot free of tracebacks."""
    if not isinstance(raw, dict):
        return f"is a JSON {json_type(raw)}, not an object"
    ph = raw.get("ph")
    if not isinstance(ph, str):
        return "has no ph"
    for key in ("pid", "tid"):
        if not is_int(raw.get(key)):
            return f"has no integer {key}"
    if ph != "M" and not is_time(raw.get("ts")):
        return f"has no ts in µs up to {MAX_US:g}"
    if ph == "X" and not (is_time(raw.get("dur")) and raw["dur"] >= 0):
        return f"is an X without a dur in µs from 0 to {MAX_US:g}"
    for key in ("name", "cat"):
        if key in raw and not isinstance(raw[key], str):
            return f"has a {key} that is no string"
    if "args" in raw and not isinstance(raw["args"], dict):
        return "has args that are no object"
    if ph in ("s", "f") and not (is_int(raw.get("id")) or isinstance(raw.get("id"), str)):
        return "is a flow event without an id"
    return None


def make_event(i, raw):
    ts = raw.get("ts")  # metadata may go without one
    return Event(i, raw["ph"], raw["pid"], raw["tid"], to_ns(ts) if is_time(ts) else 0,
                 to_ns(raw["dur"]) if raw["ph"] == "X" else 0,
                 raw.get("cat", ""), raw.get("name", ""), raw.get("args", {}), raw.get("id"))


def clock_uncertainty(other):
    """pid -> the stated uncertainty (µs) of the process's clock against the merged trace's, from
    otherData.processes (a merged trace's); entries without an integer pid or a number left out."""
    processes = other.get("processes") if isinstance(other, dict) else None
    return {p["pid"]: p["clock_uncertainty_us"] for p in processes if isinstance(p, dict) and is_int(p.get("pid"))
            and is_time(p.get("clock_uncertainty_us"))} if isinstance(processes, list) else {}


@dataclass
class Trace:
    """A trace's events and what its metadata says about them."""
    path: str
    events: list  # every event of a known ph except metadata, in file order
    other: dict  # otherData
    process_names: dict = field(default_factory=dict)  # pid -> name
    thread_names: dict = field(default_factory=dict)  # (pid, tid) -> name
    process_order: dict = field(default_factory=dict)  # pid -> sort_index
    thread_order: dict = field(default_factory=dict)  # (pid, tid) -> sort_index
    by_thread: dict = field(default_factory=dict)  # (pid, tid) -> events, file order
    bounds: dict = field(default_factory=dict)  # pid -> (first ts, last ts or span end), ns

    def processes(self):
        return sorted(self.bounds, key=lambda p: (self.process_order.get(p, 0), p))

    def threads(self, pid):
        """The recording threads of pid in display order (lanes and stream tracks are not threads)."""
        keys = [k for k in self.by_thread if k[0] == pid and k[1] < SYNTHETIC_TID_BASE]
        return sorted(keys, key=lambda k: (self.thread_order.get(k, 0), k[1]))

    def stream_tracks(self, pid):
        keys = [k for k in self.by_thread if k[0] == pid and self.is_stream_track(k)]
        return sorted(keys, key=lambda k: (self.thread_order.get(k, 0), k[1]))

    def is_stream_track(self, key):
        return key[1] >= SYNTHETIC_TID_BASE and STREAM_NAME.fullmatch(self.thread_names.get(key, "")) is not None

    def is_worker(self, key):
        return WORKER_NAME.fullmatch(self.thread_names.get(key, "")) is not None

    def process_label(self, pid):
        name = self.process_names.get(pid)
        return f"{name} (pid {pid})" if name else f"pid {pid}"

    def thread_label(self, key):
        return self.thread_names.get(key) or f"tid {key[1]}"

    def span(self, pid):
        first, last = self.bounds[pid]
        return last - first


def load(path):
    """The trace at path; TraceError if it is no trace or an event lacks what the analysis reads
    (the message points to heddle-trace validate, which lists every problem)."""
    doc = read_document(path)
    other = doc.get("otherData")
    trace = Trace(path, [], other if isinstance(other, dict) else {})
    for i, raw in enumerate(doc["traceEvents"]):
        problem = event_problem(i, raw)
        if problem:
            raise TraceError(f"{path}: event #{i} {problem} (heddle-trace validate lists every problem)")
        if raw["ph"] not in PHASES:
            continue  # a kind of event this version does not write: nothing here reads it
        ev = make_event(i, raw)
        if ev.ph == "M":
            add_metadata(trace, ev)
            continue
        trace.events.append(ev)
        trace.by_thread.setdefault((ev.pid, ev.tid), []).append(ev)
        first, last = trace.bounds.get(ev.pid, (ev.ts, ev.ts))
        trace.bounds[ev.pid] = (min(first, ev.ts), max(last, ev.ts + ev.dur))
    return trace


def add_metadata(trace, ev):
    value = ev.args.get("name") if ev.name.endswith("_name") else ev.args.get("sort_index")
    if ev.name == "process_name" and isinstance(value, str):
        trace.process_names[ev.pid] = value
    elif ev.name == "thread_name" and isinstance(value, str):
        trace.thread_names[(ev.pid, ev.tid)] = value
    elif ev.name == "process_sort_index" and is_int(value):
        trace.process_order[ev.pid] = value
    elif ev.name == "thread_sort_index" and is_int(value):
        trace.thread_order[(ev.pid, ev.tid)] = value
