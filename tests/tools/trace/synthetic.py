# SPDX-License-Identifier: Apache-2.0
"""Synthetic heddle traces for the heddle-trace tests, built event by event as the recorder writes
them (docs/trace.md): each builder's docstring works out the numbers the tests expect."""
import copy
import json


class Builder:
    """A trace in the making. Call the methods per thread in time order, as the recorder writes
    (an enclosing span before what it encloses)."""

    def __init__(self):
        self.events = []
        self.other = {"heddle_trace_version": 1, "clock": "steady", "records": 0, "dropped": 0,
                      "buffer_bytes": 1 << 20, "threads": []}

    def process(self, pid, name):
        self.events.append({"ph": "M", "pid": pid, "tid": 0, "ts": 0, "name": "process_name", "args": {"name": name}})

    def thread(self, pid, tid, name):
        self.events.append({"ph": "M", "pid": pid, "tid": tid, "ts": 0, "name": "thread_name", "args": {"name": name}})
        self.other["threads"].append({"pid": pid, "tid": tid, "name": name, "records": 0, "dropped": 0})

    def add(self, ph, pid, tid, ts, cat, name, args=None, **extra):
        ev = {"ph": ph, "pid": pid, "tid": tid, "ts": ts, "cat": cat, "name": name, **extra}
        if args:
            ev["args"] = args
        self.events.append(ev)
        self.other["records"] += 1
        return ev

    def x(self, pid, tid, ts, dur, cat, name, **args):
        return self.add("X", pid, tid, ts, cat, name, args, dur=dur)

    def b(self, pid, tid, ts, name="parked", cat="worker", **args):
        return self.add("B", pid, tid, ts, cat, name, args)

    def e(self, pid, tid, ts, name="parked", cat="worker", **args):
        return self.add("E", pid, tid, ts, cat, name, args)

    def i(self, pid, tid, ts, cat, name, **args):
        return self.add("i", pid, tid, ts, cat, name, args, s="t")

    def s(self, pid, tid, ts, name, flow_id, **args):
        return self.add("s", pid, tid, ts, "flow", name, args, id=flow_id)

    def f(self, pid, tid, ts, name, flow_id, **args):
        return self.add("f", pid, tid, ts, "flow", name, args, id=flow_id, bp="e")

    def doc(self):
        return {"traceEvents": copy.deepcopy(self.events), "displayTimeUnit": "ns",
                "otherData": copy.deepcopy(self.other)}


def write(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return str(path)


def shares(b, pid=1):
    """Two workers and main over [1000, 2000] µs (span 1000 µs):
    worker 0: task A [1000, 1300) holding a wait [1100, 1250) in which it helps with task B
      [1120, 1170) and parks [1180, 1230); search [1300, 1400); parked [1400, 1600); task B
      [1600, 1700) with a user span inside; nothing after 1700.
      running 100 + 50 + 100 = 250, helping 50, waiting 20 + 10 + 20 = 50, parked 50 + 200 = 250,
      searching 100, other 300.
    worker 1: task A [1000, 1500), search [1500, 1750), parked [1750, 2000) closed at stop:
      running 500, searching 250, parked 250.
    main: block [1000, 1800): waiting 800, other 200.
    Task labels: A 300, 500 (total 800, mean 400, p99 500); B 50, 100 (150, 75, 100)."""
    b.process(pid, "app")
    b.thread(pid, 10, "worker 0")
    b.thread(pid, 11, "worker 1")
    b.thread(pid, 12, "main")
    b.x(pid, 10, 1000, 300, "task", "A", how="loop")
    b.x(pid, 10, 1100, 150, "worker", "wait", on="future")
    b.x(pid, 10, 1120, 50, "task", "B", how="nested")
    b.b(pid, 10, 1180, kind="waiting")
    b.e(pid, 10, 1230, woken=True)
    b.x(pid, 10, 1300, 100, "worker", "search")
    b.b(pid, 10, 1400, kind="idle")
    b.e(pid, 10, 1600, woken=True)
    b.x(pid, 10, 1600, 100, "task", "B", how="loop", stolen_from=1)
    b.x(pid, 10, 1620, 20, "user", "phase")
    b.x(pid, 11, 1000, 500, "task", "A", how="loop")
    b.x(pid, 11, 1500, 250, "worker", "search")
    b.i(pid, 11, 1590, "worker", "wake", worker=0)  # woke worker 0, parked until 1600
    b.b(pid, 11, 1750, kind="idle")
    b.e(pid, 11, 2000, woken=False, at_stop=True)
    b.x(pid, 12, 1000, 800, "worker", "block")


SHARES_PER_THREAD = {  # µs over the span of 1000 µs
    "worker 0": {"running": 250, "helping": 50, "searching": 100, "parked": 250, "waiting": 50, "other": 300},
    "worker 1": {"running": 500, "helping": 0, "searching": 250, "parked": 250, "waiting": 0, "other": 0},
    "main": {"running": 0, "helping": 0, "searching": 0, "parked": 0, "waiting": 800, "other": 200},
}


def percentiles(b, pid=2):
    """One worker: 100 tasks "tiny" of 1, 2, ..., 100 µs back to back from 0 (total 5050, mean
    50.5, p99 99 by nearest rank), then "big" 1000, 2000, 3000 µs (total 6000: first by total)."""
    b.process(pid, "percentiles")
    b.thread(pid, 1, "worker 0")
    ts = 0
    for dur in range(1, 101):
        b.x(pid, 1, ts, dur, "task", "tiny")
        ts += dur
    for dur in (1000, 2000, 3000):
        b.x(pid, 1, ts, dur, "task", "big")
        ts += dur


def successors(b, pid=3, lone=True):
    """A timer engine completes operations and a worker runs their successors:
    express 100 → 110 and 200 → 230 (10, 30 µs: median 10, p99 30), normal 300 → 800 (500 µs).
    With lone, a normal successor (id 4) whose f never comes (not in the latencies)."""
    b.process(pid, "async")
    b.thread(pid, 20, "timer engine")
    b.thread(pid, 21, "worker 0")
    b.x(pid, 20, 0, 100, "async", "timer", strategy="express")
    b.s(pid, 20, 100, "successor", 1, strategy="express")
    b.x(pid, 20, 150, 50, "async", "read", strategy="express")
    b.s(pid, 20, 200, "successor", 2, strategy="express")
    b.s(pid, 20, 300, "successor", 3, strategy="normal")
    if lone:
        b.s(pid, 20, 400, "successor", 4, strategy="normal")
    b.x(pid, 21, 110, 10, "task", "succ", how="successor")
    b.f(pid, 21, 110, "successor", 1)
    b.x(pid, 21, 230, 10, "task", "succ", how="successor")
    b.f(pid, 21, 230, "successor", 2)
    b.x(pid, 21, 800, 10, "task", "succ")
    b.f(pid, 21, 800, "successor", 3)


def queues(b, pid=4):
    """Over [0, 1000] µs: queue "db" drains [0, 100) with 3 items and [500, 650) with 2 (busy 250:
    25%); "log" drains [200, 250) with 1 item (5%). Sampled items (ids 1, 2: the same ids as the
    successors', another flow name): enqueued at 10 and 400, started at 30 and 520 in db's drains
    (waits 20, 120); item 3 starts at 700 outside any drain (unplaced)."""
    b.process(pid, "queues")
    b.thread(pid, 30, "main")
    b.thread(pid, 31, "worker 0")
    b.thread(pid, 32, "worker 1")
    b.x(pid, 30, 0, 1000, "worker", "block")
    b.s(pid, 30, 10, "queue item", 1)
    b.s(pid, 30, 400, "queue item", 2)
    b.s(pid, 30, 600, "queue item", 3, sampled=64)
    b.x(pid, 31, 0, 100, "dispatch", "db", items=3)
    b.f(pid, 31, 30, "queue item", 1)
    b.x(pid, 31, 500, 150, "dispatch", "db", items=2)
    b.f(pid, 31, 520, "queue item", 2)
    b.x(pid, 32, 200, 50, "dispatch", "log", items=1)
    b.f(pid, 32, 700, "queue item", 3)


def modules(b, pid=5):
    """A framework job on two streams: tracker produces for 100 and 300 µs (total 400, mean 200,
    p99 300) after stalls of 40 and 60 (100: 25% of its produce time) and a prefetch of 30; calo
    acquires 50 and produces 200, no stall, prefetch 20."""
    b.process(pid, "fw")
    b.thread(pid, 40, "worker 0")
    b.thread(pid, 41, "worker 1")
    b.thread(pid, 1 << 30, "stream 0")
    b.thread(pid, (1 << 30) + 1, "stream 1")
    b.x(pid, 1 << 30, 0, 660, "event", "event 1:1:1", run=1, lumi=1, event=1)
    b.x(pid, (1 << 30) + 1, 100, 700, "event", "event 1:1:2", run=1, lumi=1, event=2)
    b.x(pid, 40, 0, 30, "module.prefetch", "tracker", event=1, stream=0)
    b.x(pid, 40, 30, 40, "module.stall", "tracker", event=1, stream=0)
    b.x(pid, 40, 70, 100, "module", "tracker", event=1, stream=0, phase="produce")
    b.x(pid, 40, 200, 50, "module", "calo", event=2, stream=1, phase="acquire")
    b.x(pid, 40, 300, 60, "module.stall", "tracker", event=2, stream=1)
    b.x(pid, 40, 360, 300, "module", "tracker", event=2, stream=1, phase="produce")
    b.x(pid, 41, 100, 20, "module.prefetch", "calo", event=2, stream=1)
    b.x(pid, 41, 300, 200, "module", "calo", event=2, stream=1, phase="produce")


def messages(b, pids=(100, 200), dropped=True):
    """Node 0 (pid 100) sends node 1 (pid 200) two posts: sent at 10 and 20, received at 15 and 50
    (latency 5, 30); node 1 answers once: 60 → 70 (10). As a merged trace has them: each message a
    send span with the flow's start, a receive span with its end, the flows numbered. The clocks'
    uncertainties 0.5 and 1.5 µs: ± 2 µs on every latency. With dropped, worker 0 of node 0 lost 7
    records."""
    p0, p1 = pids
    b.process(p0, "prog node 0")
    b.process(p1, "prog node 1")
    b.thread(p0, 1, "worker 0")
    b.thread(p1, 1, "worker 0")
    b.other["processes"] = [{"pid": p0, "name": "prog node 0", "node": 0, "clock_offset_us": 0, "clock_uncertainty_us": 0.5},
                            {"pid": p1, "name": "prog node 1", "node": 1, "clock_offset_us": 12.25,
                             "clock_uncertainty_us": 1.5}]
    b.x(p0, 1, 10, 1, "am", "send", kind="post", to=1, bytes=64)
    b.s(p0, 1, 10, "message", 1)
    b.x(p0, 1, 20, 1, "am", "send", kind="post", to=1, bytes=64)
    b.s(p0, 1, 20, "message", 2)
    b.x(p0, 1, 70, 5, "am", "receive", kind="reply_value", **{"from": 1, "bytes": 16})
    b.f(p0, 1, 70, "message", 3)
    b.x(p1, 1, 15, 5, "am", "receive", kind="post", **{"from": 0, "bytes": 64})
    b.f(p1, 1, 15, "message", 1)
    b.x(p1, 1, 50, 5, "am", "receive", kind="post", **{"from": 0, "bytes": 64})
    b.f(p1, 1, 50, "message", 2)
    b.x(p1, 1, 60, 1, "am", "send", kind="reply_value", to=0, bytes=16)
    b.s(p1, 1, 60, "message", 3)
    if dropped:
        b.other["dropped"] = 7
        b.other["threads"][-2]["dropped"] = 7


def everything(lone=False, dropped=False):
    """All of the above in one merged trace (one pid each), valid unless lone (a flow without its
    end)."""
    b = Builder()
    shares(b)
    percentiles(b)
    successors(b, lone=lone)
    queues(b)
    modules(b)
    messages(b, dropped=dropped)
    return b.doc()
