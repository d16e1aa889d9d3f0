# SPDX-License-Identifier: Apache-2.0
"""heddle-trace summary: the numbers (as a JSON-ready dict: times in µs, shares as fractions).
report.py prints them; docs/trace.md says what each means."""
import bisect

from .flows import pair_flows
from .load import clock_uncertainty, is_int
from .stats import distribution, us
from .timeline import STATES, attribute


def summarize(trace, top=10):
    flows = pair_flows(trace.events)
    spans = {key: attribute(trace.by_thread[key], *trace.bounds[key[0]]) for pid in trace.processes()
             for key in trace.threads(pid)}
    modules = module_times(trace)
    return {
        "trace": trace.path,
        "version": trace.other.get("heddle_trace_version"),
        "records": trace.other.get("records") if is_int(trace.other.get("records")) else None,
        "dropped": dropped(trace),
        "processes": [process_shares(trace, pid, spans) for pid in trace.processes()],
        "task_labels": top_rows(labelled(trace, "task"), top),
        "modules": top_rows(modules, top),
        "successors": successors(flows),
        "queues": queues(trace, flows),
        "module_stalls": module_stalls(trace, modules, top),
        "messages": messages(trace, flows),
        "lone_flows": {"starts": len(flows.lone_starts), "finishes": len(flows.lone_finishes)},
    }


def dropped(trace):
    """Records lost to full buffers: the total and the threads that lost some."""
    threads = [t for t in other_list(trace, "threads") if is_int(t.get("dropped")) and t["dropped"] > 0]
    total = trace.other.get("dropped")
    if not is_int(total):
        total = sum(t["dropped"] for t in threads)
    return {"total": total, "threads": [{k: t.get(k) for k in ("pid", "tid", "name", "dropped")} for t in threads]}


def shares(time, span, threads=1):
    """time per state over span × threads; None for a process with no extent in time."""
    whole = span * threads
    return {state: (time[state] / whole if whole else None) for state in STATES}


def process_shares(trace, pid, spans):
    """Per thread, and over the process's threads (and its workers alone): the fraction of the
    process's span in each state. Stream tracks are not threads and are left out."""
    span = trace.span(pid)
    threads, total, workers, n_workers = [], dict.fromkeys(STATES, 0), dict.fromkeys(STATES, 0), 0
    for key in trace.threads(pid):
        time = spans[key].time
        name = trace.thread_label(key)
        threads.append({"tid": key[1], "name": name, "time_us": {s: us(t) for s, t in time.items()},
                        "shares": shares(time, span)})
        is_worker = trace.is_worker(key)
        n_workers += is_worker
        for state in STATES:
            total[state] += time[state]
            workers[state] += time[state] if is_worker else 0
    return {
        "pid": pid, "name": trace.process_names.get(pid), "span_us": us(span), "threads": threads,
        "shares": shares(total, span, len(threads)),
        "workers": n_workers, "worker_shares": shares(workers, span, n_workers) if n_workers else None,
    }


def labelled(trace, cat):
    """label -> durations (ns) of the X events of cat."""
    groups = {}
    for ev in trace.events:
        if ev.ph == "X" and ev.cat == cat:
            groups.setdefault(ev.name, []).append(ev.dur)
    return groups


def module_times(trace):
    """(module label, phase) -> durations of its produce and acquire spans."""
    groups = {}
    for ev in trace.events:
        if ev.ph == "X" and ev.cat == "module":
            phase = str(ev.args.get("phase", "produce"))
            groups.setdefault((ev.name, phase), []).append(ev.dur)
    return groups


def top_rows(groups, top):
    """The top labels by total time (then by name, for a stable order): count, total, mean, p99."""
    rows = []
    for key, durs in groups.items():
        d = distribution(durs)
        label = {"label": key} if isinstance(key, str) else {"label": key[0], "phase": key[1]}
        rows.append({**label, "count": d["count"], "total_us": d["total_us"], "mean_us": d["mean_us"],
                     "p99_us": d["p99_us"]})
    rows.sort(key=lambda r: (-r["total_us"], r["label"], r.get("phase", "")))
    return {"rows": rows[:top], "labels": len(rows)}


def latency_row(values):
    d = distribution(values)
    return {"count": d["count"], "median_us": d["median_us"], "p99_us": d["p99_us"]}


def successors(flows):
    """Per strategy (from the s event): completion → successor start."""
    groups = {}
    for s, f in flows.pairs:
        if s.name == "successor":
            groups.setdefault(str(s.args.get("strategy", "unknown")), []).append(f.ts - s.ts)
    return [{"strategy": k, **latency_row(v)} for k, v in sorted(groups.items())]


def queues(trace, flows):
    """Per serial queue (pid, label): drains, items, busy share of the process's span, and the
    enqueue → start wait of the sampled items, each found in the drain enclosing its f."""
    rows, drains_of = {}, {}
    for ev in trace.events:
        if ev.ph == "X" and ev.cat == "dispatch" and ev.name != "item":
            row = rows.setdefault((ev.pid, ev.name), {"drains": 0, "items": 0, "busy": 0, "waits": []})
            row["drains"] += 1
            row["items"] += ev.args.get("items", 0) if is_int(ev.args.get("items")) else 0
            row["busy"] += ev.dur
            drains_of.setdefault((ev.pid, ev.tid), []).append(ev)
    starts = {key: [d.ts for d in drains] for key, drains in drains_of.items()}
    unplaced = 0
    for s, f in flows.pairs:
        if s.name != "queue item":
            continue
        drains = drains_of.get((f.pid, f.tid), [])
        i = bisect.bisect_right(starts.get((f.pid, f.tid), []), f.ts) - 1
        if i >= 0 and f.ts <= drains[i].ts + drains[i].dur:
            rows[(f.pid, drains[i].name)]["waits"].append(f.ts - s.ts)
        else:
            unplaced += 1
    out = []
    for (pid, label), row in sorted(rows.items()):
        span = trace.span(pid)
        out.append({"pid": pid, "label": label, "drains": row["drains"], "items": row["items"],
                    "busy_us": us(row["busy"]), "busy_share": row["busy"] / span if span else None,
                    "item_wait": latency_row(row["waits"])})
    return {"rows": out, "unplaced_items": unplaced}


def module_stalls(trace, modules, top):
    """Per module: stall time (ready, waiting for a queue or a thread) and its share of the module's
    produce time; prefetch time (waiting for its inputs)."""
    stall, prefetch = labelled(trace, "module.stall"), labelled(trace, "module.prefetch")
    rows = []
    for label in set(stall) | set(prefetch):
        produce = sum(modules.get((label, "produce"), []))
        stalled = sum(stall.get(label, []))
        rows.append({"label": label, "stall_us": us(stalled), "stalls": len(stall.get(label, [])),
                     "stall_share": stalled / produce if produce else None,
                     "prefetch_us": us(sum(prefetch.get(label, []))), "prefetches": len(prefetch.get(label, []))})
    rows.sort(key=lambda r: (-r["stall_us"], -r["prefetch_us"], r["label"]))
    return {"rows": rows[:top], "labels": len(rows)}


def messages(trace, flows):
    """Active messages per (from node, to node): sent (`send` spans), received (`receive` spans), and
    the latency from a send to its receipt from the message flows, with the clock uncertainty of the
    two processes where they differ (a merged trace's otherData.processes)."""
    nodes = {p["pid"]: p["node"] for p in other_list(trace, "processes")
             if is_int(p.get("pid")) and is_int(p.get("node")) and p["node"] >= 0}

    def node(pid):
        # A process's node (otherData.processes[].node: heddle-run's HEDDLE_NODE, an MPI rank); a
        # process that is no node of a run (the loopback backend's nodes share one) by its pid.
        return nodes.get(pid, f"pid {pid}")

    uncertainty = clock_uncertainty(trace.other)
    rows = {}

    def row(src, dst):
        return rows.setdefault((src, dst), {"sent": 0, "received": 0, "latencies": [], "uncertainty_us": 0})

    for ev in trace.events:
        if ev.cat == "am" and ev.ph == "X" and ev.name == "send":
            row(node(ev.pid), node_arg(ev, "to"))["sent"] += 1
        elif ev.cat == "am" and ev.ph == "X" and ev.name == "receive":
            row(node_arg(ev, "from"), node(ev.pid))["received"] += 1
    for s, f in flows.pairs:
        if s.name == "message":
            r = row(node(s.pid), node(f.pid))
            r["latencies"].append(f.ts - s.ts)
            if s.pid != f.pid:
                r["uncertainty_us"] = max(r["uncertainty_us"], uncertainty.get(s.pid, 0) + uncertainty.get(f.pid, 0))

    def order(key):
        return tuple((isinstance(k, str), k if isinstance(k, int) else 0, str(k)) for k in key)

    return [{"from": src, "to": dst, "sent": r["sent"], "received": r["received"],
             "latency": latency_row(r["latencies"]), "clock_uncertainty_us": r["uncertainty_us"]}
            for (src, dst), r in sorted(rows.items(), key=lambda kv: order(kv[0]))]


def node_arg(ev, key):
    value = ev.args.get(key)
    return value if is_int(value) else "?"


def other_list(trace, key):
    """The objects of otherData[key] (processes, threads); none where the file has none."""
    value = trace.other.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
