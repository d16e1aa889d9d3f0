# SPDX-License-Identifier: Apache-2.0
"""heddle-trace plot: timeline.png (one row per thread), streams.png (the framework's streams, as
CMS's StallMonitor draws them) and utilisation.png (threads running tasks over time)."""
import os

import matplotlib

matplotlib.use("Agg")  # files only: no display needed, none opened
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .load import STREAM_NAME, SYNTHETIC_TID_BASE, TraceError, is_int  # noqa: E402
from .timeline import BUSY, attribute  # noqa: E402

TOP_COLOURS = 12
GREY = "#b0b0b0"
# Labels get tab10's saturated colours less its grey (grey is "the rest") and its red (red is a
# stall), and four dark ones; the thin strips get pastels that no label gets.
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#7b4173", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#393b79", "#637939", "#843c39"]
THIN = {"parked": "#d9d9d9", "search": "#b3e2cd", "wait": "#fdcdac", "block": "#fdcdac"}
THIN_HEIGHT = 0.14
ROW_HEIGHT = 0.8
STALL, PREFETCH, EVENT = "#ff0000", "#cbd5e8", "#ececec"


def plot(trace, out_dir, bins=200):
    """Writes the PNGs into out_dir (made if missing); returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    attributions = {key: attribute(trace.by_thread[key], *trace.bounds[key[0]]) for pid in trace.processes()
                    for key in trace.threads(pid)}
    colours = label_colours(trace)
    if not trace.events:
        raise TraceError(f"{trace.path}: no events to plot")
    origin = min(b[0] for b in trace.bounds.values())
    length = ms(max(b[1] for b in trace.bounds.values()), origin)
    written = [timeline(trace, attributions, colours, origin, length, os.path.join(out_dir, "timeline.png"))]
    if any(trace.stream_tracks(pid) for pid in trace.processes()):
        written.append(streams(trace, colours, origin, length, os.path.join(out_dir, "streams.png")))
    written.append(utilisation(trace, attributions, origin, bins, os.path.join(out_dir, "utilisation.png")))
    return written


def coloured(ev):
    return ev.ph == "X" and ev.cat not in ("worker", "event", "module.stall", "module.prefetch")


def label_colours(trace):
    """The TOP_COLOURS labels with the most time (tasks, modules, drains, handlers, operations,
    user spans) get a colour each; the rest are grey."""
    total = {}
    for ev in trace.events:
        if coloured(ev):
            total[ev.name] = total.get(ev.name, 0) + ev.dur
    top = sorted(total, key=lambda k: (-total[k], k))[:TOP_COLOURS]
    return {label: PALETTE[i] for i, label in enumerate(top)}


class Bars:
    """Rectangles grouped by colour, drawn as one collection per colour. A rectangle that starts
    within the last one of its colour and place, or less than `merge` after it, grows that one
    instead: a thread's thousands of sub-pixel tasks cost one bar, not a million polygons."""

    def __init__(self, merge):
        self.merge = merge
        self.groups = {}  # (order, colour) -> {(y0, height): [[x0, x1], ...]}

    def add(self, x0, x1, y0, height, colour, order=0):
        runs = self.groups.setdefault((order, colour), {}).setdefault((y0, height), [])
        if runs and runs[-1][0] <= x0 < runs[-1][1] + self.merge:  # rows of streams come in any order
            runs[-1][1] = max(runs[-1][1], x1)
        else:
            runs.append([x0, x1])

    def draw(self, ax):
        for (_, colour), places in sorted(self.groups.items(), key=lambda kv: kv[0][0]):
            verts = [[(x0, y0), (x0, y0 + h), (x1, y0 + h), (x1, y0)]
                     for (y0, h), runs in places.items() for x0, x1 in runs]
            ax.add_collection(PolyCollection(verts, facecolors=[colour], edgecolors=[colour], linewidths=0.2,
                                             antialiased=False))  # the edge: a zero-length span stays a hairline


def ms(ns, origin):
    return (ns - origin) / 1e6


def legend(ax, colours, drawn, extra):
    """The coloured labels among those drawn, grey if any drawn label has none, then extra."""
    handles = [Patch(color=c, label=label) for label, c in colours.items() if label in drawn]
    if drawn - colours.keys():
        handles.append(Patch(color=GREY, label="other labels"))
    handles += [Patch(color=c, label=k) for k, c in extra]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)


def merge_gap(length):
    """A quarter of a pixel of the timeline (14 inches at 100 dpi), in ms: gaps below it do not show."""
    return length / (4 * 14 * 100)


def rows_figure(n_rows, title):
    fig, ax = plt.subplots(figsize=(14, min(3.5 + 0.35 * max(n_rows, 1), 60)))  # 3.5: room for the legend
    ax.set_title(title)
    ax.set_xlabel("time (ms)")
    ax.set_ylim(max(n_rows, 1) - 0.5, -0.5)  # the first row on top
    return fig, ax


def finish(fig, ax, labels, x_end, path):
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlim(0, max(x_end, 1e-3))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def timeline(trace, attributions, colours, origin, length, path):
    """One row per thread, grouped by process: nested spans drawn shorter on top of their parents;
    parked, search and wait as thin light strips over the row's foot."""
    keys = [key for pid in trace.processes() for key in trace.threads(pid)]
    fig, ax = rows_figure(len(keys), f"{os.path.basename(trace.path)}: threads")
    bars, drawn = Bars(merge_gap(length)), set()
    for row, key in enumerate(keys):
        foot = row + ROW_HEIGHT / 2
        for span in attributions[key].spans:
            ev = span.ev
            x0, x1 = ms(span.start, origin), ms(span.end, origin)
            if ev.cat == "worker" and ev.name in THIN:
                bars.add(x0, x1, foot - THIN_HEIGHT, THIN_HEIGHT, THIN[ev.name], order=1000)  # over the task they wait in
            elif coloured(ev):
                drawn.add(ev.name)
                height = ROW_HEIGHT * 0.75 ** span.depth
                bars.add(x0, x1, foot - height, height, colours.get(ev.name, GREY), order=span.depth)
    bars.draw(ax)
    for row in range(1, len(keys)):
        if keys[row][0] != keys[row - 1][0]:
            ax.axhline(row - 0.5, color="black", linewidth=0.6)  # between processes
    legend(ax, colours, drawn, [("parked", THIN["parked"]), ("search", THIN["search"]), ("wait / block", THIN["wait"])])
    labels = [f"{trace.process_label(pid) if len(trace.bounds) > 1 else ''} {trace.thread_label((pid, tid))}".strip()
              for pid, tid in keys]
    return finish(fig, ax, labels, length, path)


def stream_number(trace, key):
    match = STREAM_NAME.fullmatch(trace.thread_names.get(key, ""))
    return int(match.group(1)) if match else key[1] - SYNTHETIC_TID_BASE


def lanes(spans):
    """Greedy lanes for overlapping spans (modules of one stream run concurrently): span -> lane
    index, and the lane count."""
    ends, lane_of = [], {}
    for span in sorted(spans, key=lambda s: (s.ts, s.index)):
        lane = next((i for i, end in enumerate(ends) if end <= span.ts), len(ends))
        if lane == len(ends):
            ends.append(0)
        ends[lane] = span.ts + span.dur
        lane_of[span.index] = lane
    return lane_of, max(len(ends), 1)


def streams(trace, colours, origin, length, path):
    """One row per stream: its events as light bars, the modules that ran for it coloured by label
    (overlapping ones in lanes), stalls as red and prefetches as blue strips above and below."""
    rows = {}  # (pid, stream) -> row
    for pid in trace.processes():
        for key in trace.stream_tracks(pid):
            rows.setdefault((pid, stream_number(trace, key)), len(rows))
    per_row = {}
    for ev in trace.events:
        stream = ev.args.get("stream")
        if ev.ph == "X" and ev.cat.startswith("module") and is_int(stream) and (ev.pid, stream) in rows:
            per_row.setdefault(rows[(ev.pid, stream)], []).append(ev)
    fig, ax = rows_figure(len(rows), f"{os.path.basename(trace.path)}: streams")
    bars = Bars(merge_gap(length))
    for pid in trace.processes():
        for key in trace.stream_tracks(pid):
            row = rows[(pid, stream_number(trace, key))]
            for ev in trace.by_thread[key]:
                if ev.ph == "X" and ev.cat == "event":
                    bars.add(ms(ev.ts, origin), ms(ev.ts + ev.dur, origin), row - ROW_HEIGHT / 2, ROW_HEIGHT, EVENT, order=-1)
    for row, evs in per_row.items():
        modules = [ev for ev in evs if ev.cat == "module"]
        lane_of, n_lanes = lanes(modules)
        height = (ROW_HEIGHT - 2 * THIN_HEIGHT) / n_lanes
        for ev in evs:
            x0, x1 = ms(ev.ts, origin), ms(ev.ts + ev.dur, origin)
            if ev.cat == "module":
                y0 = row - ROW_HEIGHT / 2 + THIN_HEIGHT + lane_of[ev.index] * height
                bars.add(x0, x1, y0, height, colours.get(ev.name, GREY), order=1)
            elif ev.cat == "module.stall":
                bars.add(x0, x1, row - ROW_HEIGHT / 2, THIN_HEIGHT, STALL, order=2)
            elif ev.cat == "module.prefetch":
                bars.add(x0, x1, row + ROW_HEIGHT / 2 - THIN_HEIGHT, THIN_HEIGHT, PREFETCH, order=2)
    bars.draw(ax)
    drawn = {ev.name for evs in per_row.values() for ev in evs if ev.cat == "module"}
    legend(ax, colours, drawn, [("event", EVENT), ("stall", STALL), ("prefetch", PREFETCH)])
    labels = [""] * len(rows)
    for (pid, stream), row in rows.items():
        labels[row] = f"{trace.process_label(pid) + ' ' if len(trace.bounds) > 1 else ''}stream {stream}"
    return finish(fig, ax, labels, length, path)


def busy_per_bin(attributions, keys, first, last, bins):
    """The mean number of threads of keys running a task (running or helping) in each of bins equal
    slices of [first, last]: the tasks' time in a slice over its length."""
    span = max(last - first, 1)
    edges = [first + k * span // bins for k in range(bins + 1)]
    busy = [0] * bins
    for key in keys:
        for a, b, state in attributions[key].segments:
            if state not in BUSY:
                continue
            k = min((a - first) * bins // span, bins - 1)
            while k < bins and edges[k] < b:
                busy[k] += max(0, min(b, edges[k + 1]) - max(a, edges[k]))
                k += 1
    return edges, [t / max(edges[k + 1] - edges[k], 1) for k, t in enumerate(busy)]


def utilisation(trace, attributions, origin, bins, path):
    pids = trace.processes()
    fig, axes = plt.subplots(len(pids), 1, figsize=(12, 2.5 * len(pids) + 1), squeeze=False, sharex=True)
    for ax, pid in zip(axes[:, 0], pids):
        keys = trace.threads(pid)
        first, last = trace.bounds[pid]
        edges, mean = busy_per_bin(attributions, keys, first, last, bins)
        ax.stairs(mean, [ms(e, origin) for e in edges], fill=True, alpha=0.7, label="running tasks")
        workers = sum(1 for key in keys if trace.is_worker(key))
        if workers:
            ax.axhline(workers, color="black", linestyle="--", linewidth=0.8, label=f"{workers} worker{'s' if workers > 1 else ''}")
        ax.set_ylim(0, max(max(mean, default=0), workers, 1) * 1.1)
        ax.set_ylabel("threads")
        ax.set_title(f"{trace.process_label(pid)}: threads running tasks ({bins} bins)", fontsize=10)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time (ms)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
