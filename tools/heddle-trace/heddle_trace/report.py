# SPDX-License-Identifier: Apache-2.0
"""heddle-trace summary's text: the tables of summary.summarize's numbers. Sections with nothing
to show are left out."""
from .stats import fmt_share, fmt_us, table
from .timeline import STATES


def warnings(s):
    """The lines that must not be missed: records lost, a version this tool does not know."""
    lines = []
    d = s["dropped"]
    if d["total"]:
        where = ", ".join(f"{t.get('name') or 'tid ' + str(t.get('tid'))} (pid {t.get('pid')}): {t['dropped']}"
                          for t in d["threads"])
        lines.append(f"WARNING: {d['total']} records were dropped (a thread's trace buffer was full): every "
                     f"number below undercounts{'; ' + where if where else ''}. Record with a larger buffer.")
    if s["version"] not in (None, 1):
        lines.append(f"WARNING: trace version {s['version']}; this heddle-trace reads version 1")
    return lines


def render(s):
    out = [f"trace {s['trace']}" + (f" ({s['records']} records)" if s["records"] is not None else "")]
    out += warnings(s)
    out += threads_section(s)
    out += label_section("Task labels", "label", s["task_labels"])
    out += label_section("Modules", "module", s["modules"])
    out += stall_section(s["module_stalls"])
    out += latency_section("Successor latency (completion → successor start)", "strategy",
                           [(r["strategy"], r) for r in s["successors"]])
    out += queue_section(s["queues"])
    out += message_section(s["messages"])
    lone = s["lone_flows"]
    if lone["starts"] or lone["finishes"]:
        out += ["", f"{lone['starts']} flow starts without their end, {lone['finishes']} flow ends without their "
                "start: not in the latencies (heddle-trace validate lists them)"]
    return "\n".join(out) + "\n"


def share_row(label, shares):
    return [label, *(fmt_share(shares[state]) for state in STATES)]


def threads_section(s):
    out = []
    for p in s["processes"]:
        name = f"{p['name']} (pid {p['pid']})" if p["name"] else f"pid {p['pid']}"
        out += ["", f"Time per thread, {name}: shares of the process's span {fmt_us(p['span_us'])}"]
        n = len(p["threads"])
        rows = [share_row(f"process ({n} thread{'s' if n != 1 else ''})", p["shares"])]
        if p["worker_shares"] and p["workers"] != n:
            rows.append(share_row(f"workers ({p['workers']})", p["worker_shares"]))
        rows += [share_row(t["name"], t["shares"]) for t in p["threads"]]
        out.append(table(["thread", *STATES], rows))
    return out


def heading(title, part):
    shown, labels = len(part["rows"]), part["labels"]
    return f"{title} (top {shown} of {labels} by total time)" if shown < labels else f"{title} by total time"


def label_section(title, what, part):
    if not part["rows"]:
        return []
    phases = any("phase" in r for r in part["rows"])
    headers = [what, *(["phase"] if phases else []), "count", "total", "mean", "p99"]
    rows = [[r["label"], *([r["phase"]] if phases else []), r["count"], fmt_us(r["total_us"]),
             fmt_us(r["mean_us"]), fmt_us(r["p99_us"])] for r in part["rows"]]
    return ["", heading(title, part), table(headers, rows)]


def stall_section(part):
    if not part["rows"]:
        return []
    rows = [[r["label"], fmt_us(r["stall_us"]), r["stalls"], fmt_share(r["stall_share"]), fmt_us(r["prefetch_us"]),
             r["prefetches"]] for r in part["rows"]]
    return ["", "Module stalls (ready, waiting for a queue or a thread) and prefetch (waiting for inputs)",
            table(["module", "stall", "stalls", "of produce", "prefetch", "prefetches"], rows)]


def latency_section(title, what, keyed_rows):
    if not keyed_rows:
        return []
    rows = [[key, r["count"], fmt_us(r["median_us"]), fmt_us(r["p99_us"])] for key, r in keyed_rows]
    return ["", title, table([what, "count", "median", "p99"], rows)]


def queue_section(part):
    if not part["rows"]:
        return []
    rows = [[f"{r['label']} (pid {r['pid']})", r["drains"], r["items"], fmt_us(r["busy_us"]), fmt_share(r["busy_share"]),
             r["item_wait"]["count"], fmt_us(r["item_wait"]["median_us"]), fmt_us(r["item_wait"]["p99_us"])]
            for r in part["rows"]]
    out = ["", "Dispatch queues (busy: drains' time over the process's span; wait: enqueue → start, sampled items)",
           table(["queue", "drains", "items", "busy", "busy share", "waits", "wait median", "wait p99"], rows)]
    if part["unplaced_items"]:
        out.append(f"  {part['unplaced_items']} item flows end outside any drain: not in the waits")
    return out


def message_section(rows):
    if not rows:
        return []
    body = [[f"{r['from']} → {r['to']}", r["sent"], r["received"], r["latency"]["count"], fmt_us(r["latency"]["median_us"]),
             fmt_us(r["latency"]["p99_us"]), "± " + fmt_us(r["clock_uncertainty_us"]) if r["clock_uncertainty_us"] else ""]
            for r in rows]
    return ["", "Active messages per node pair (latency: send → receipt)",
            table(["nodes", "sent", "received", "timed", "median", "p99", "clocks"], body)]
