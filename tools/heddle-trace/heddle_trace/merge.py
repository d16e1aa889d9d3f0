# SPDX-License-Identifier: Apache-2.0
"""heddle-trace merge: the traces of a run's processes (heddle-run's nodes, an MPI job's ranks) as one
trace, one process track per node, with each message's flow from its send in one process to its
receipt in another.

Clocks. A trace's times are its host's CLOCK_MONOTONIC (otherData.processes[].boot_id names the
boot): the processes of one host share it exactly, and are merged as they are (offset 0, to the
nanosecond the files hold). Across hosts, each node's active-message session measured its clock
against node 0's when it started (eight probes, the shortest round trip kept: clock_offset_us,
within ± clock_uncertainty_us, half that round trip): the events of a process on another boot than
node 0's are shifted by its offset onto node 0's clock. A process on another boot without a
measured offset cannot be placed: merge refuses it rather than draw flows against a guessed time.

Messages. A send and its receipt carry the same id in the two files (sender, receiver and the
sender's 16-bit count of frames to that receiver: heddle/core/detail/trace.hpp, message_flow_id):
each send is paired with the next receipt of its id in time, and the pairs get ids of their own.
A send whose receipt no file holds (a node's trace missing, a session cut short) is dropped, as a
single process's trace drops the flows it cut."""
import json
import os

from .load import TraceError

MESSAGE_ID_BIT = 1 << 52  # message_flow_id's mark


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: a folder, not a trace") from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise TraceError(f"{path}: no traceEvents array: not a trace")
    other = doc.get("otherData")
    if not isinstance(other, dict) or other.get("heddle_trace_version") != 1:
        raise TraceError(f"{path}: not a heddle trace of version 1 (otherData.heddle_trace_version)")
    return doc


def clock_shifts(docs):
    """Per pid, the µs to add to its times to put them on node 0's clock, and how the clocks were
    aligned (otherData.clock_alignment)."""
    procs = [(path, p) for path, d in docs for p in d["otherData"].get("processes", [])]
    boots = {p.get("boot_id", "") for _, p in procs}
    if len(boots) <= 1:
        return {}, "one host: the processes share CLOCK_MONOTONIC (offset 0)"
    node0 = [p for _, p in procs if p.get("node") == 0]
    if len(node0) != 1:
        raise TraceError("the traces come from different hosts and none is node 0's, whose clock the others' "
                         "offsets refer to: merge node 0's trace with them")
    shifts = {}
    for path, p in procs:
        if p.get("boot_id", "") == node0[0].get("boot_id", ""):
            continue
        if not p.get("clock_measured"):
            raise TraceError(f"{path}: process {p.get('pid')} ran on another host than node 0 and measured no clock "
                             "offset (its session did not start while tracing): its times cannot be placed")
        shifts[p["pid"]] = float(p.get("clock_offset_us", 0))
    return shifts, ("offsets measured at session start against node 0's clock (probes, the shortest round trip; "
                    "each process within ± its clock_uncertainty_us)")


def merge(out_path, in_paths):
    """Writes the merged trace to out_path; returns (processes, messages paired, messages dropped)."""
    if not in_paths:
        raise TraceError("no traces to merge")
    docs = [(p, read(p)) for p in in_paths]
    shifts, alignment = clock_shifts(docs)
    seen_pids = {}
    events, processes, threads = [], [], []
    records = dropped = 0
    next_id = 1
    for path, doc in docs:
        procs = doc["otherData"].get("processes", [])
        for proc in procs:
            if proc["pid"] in seen_pids:
                raise TraceError(f"{path}: process {proc['pid']} is also in {seen_pids[proc['pid']]}: the same trace twice?")
            seen_pids[proc["pid"]] = path
        for e in doc["traceEvents"]:
            if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int) and e["id"] < MESSAGE_ID_BIT:
                next_id = max(next_id, e["id"] + 1)  # ids a file paired itself stay; new ones come after
        order = min((p.get("node", -1) for p in procs), default=-1)
        for proc in procs:
            events.append({"ph": "M", "cat": "__metadata", "name": "process_sort_index", "pid": proc["pid"],
                           "tid": 0, "ts": 0, "args": {"sort_index": order if order >= 0 else len(processes)}})
        for e in doc["traceEvents"]:
            shift = shifts.get(e.get("pid"), 0.0)
            if shift and e.get("ph") != "M" and isinstance(e.get("ts"), (int, float)):
                e["ts"] = round(e["ts"] + shift, 3)
        events.extend(doc["traceEvents"])
        processes.extend(procs)
        threads.extend(doc["otherData"].get("threads", []))
        records += doc["otherData"].get("records", 0)
        dropped += doc["otherData"].get("dropped", 0)

    # Messages: each send with the next receipt of its id.
    ends = [e for e in events if e.get("ph") in ("s", "f") and e.get("name") == "message"
            and isinstance(e.get("id"), int) and e["id"] >= MESSAGE_ID_BIT]
    ends.sort(key=lambda e: (e["id"], e["ts"], 0 if e["ph"] == "s" else 1))
    keep, paired, lone = set(), 0, 0
    open_send = None
    for i, e in enumerate(ends):
        if i and e["id"] != ends[i - 1]["id"] and open_send is not None:
            open_send, lone = None, lone + 1
        if e["ph"] == "s":
            lone += open_send is not None
            open_send = e
        elif open_send is not None:
            open_send["id"] = e["id"] = next_id
            next_id += 1
            keep.update((id(open_send), id(e)))
            open_send, paired = None, paired + 1
        else:
            lone += 1
    lone += open_send is not None
    message_ends = {id(e) for e in ends}
    events = [e for e in events if id(e) not in message_ends or id(e) in keep]

    merged = {"traceEvents": events, "displayTimeUnit": "ns",
              "otherData": {"heddle_trace_version": 1, "merged_from": [os.path.basename(p) for p in in_paths],
                            "clock": docs[0][1]["otherData"].get("clock", ""), "records": records, "dropped": dropped,
                            "processes": processes, "threads": threads,
                            "clock_alignment": alignment}}
    try:
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(merged, f, separators=(",", ":"))
            f.write("\n")
    except OSError as e:
        raise TraceError(f"{out_path}: cannot write: {e.strerror}") from None
    return len(processes), paired, lone
