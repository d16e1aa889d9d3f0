#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots for heddle-bench --plot DIR: a PNG per CSV written by bench/common/plot.cpp.

Left: median time per variant and thread count, with min-max bars (log scale when the medians span
more than a factor of 20, as serial against task versions does). Right, when a suite ran at more
than one thread count: each variant's speed-up over the serial program (or, without one, over its own
time at the fewest threads), the shape of TaskMan's speed-up figures. One row of panels per config.

A table with an "overhead" column (the stats suite's) is drawn as overhead against mean task length
instead, one PNG per thread count; one with a "gib_per_s" column (the am suite's) as bandwidth against
transfer size, a panel per backend (HAM's Figure 6); one with "events_in_flight" and "events_per_s"
(the reco suite's) as throughput against events in flight, a line per series; one with "start_s",
"end_s", "event" and "label" (a framework timeline) as a bar per module execution, a row per event,
coloured by module, over the number of modules running (the CMS study's Figure 5).
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(f"plot.py: {sys.executable} cannot import matplotlib "
             "(apt-get install python3-matplotlib, or set HEDDLE_BENCH_PYTHON to a python3 that has it)")


def csv_name(path):
    """The CSV's file name without its folder and extension: its PNGs are named after it."""
    return os.path.splitext(os.path.basename(path))[0]


def save(fig, out_dir, name):
    """Writes out_dir/name.png and closes the figure; the PNG's path."""
    fig.tight_layout()
    png = os.path.join(out_dir, f"{name}.png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["threads"] = int(r["threads"])
        for k in ("median_s", "min_s", "max_s"):
            r[k] = float(r[k])
    return rows


def plot_suite(path, out_dir):
    rows = load(path)
    if not rows:
        return None
    suite = rows[0]["suite"]
    configs = list(dict.fromkeys(r["config"] for r in rows))
    threads = sorted({r["threads"] for r in rows})
    speedup = len(threads) > 1
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {v: palette[i % len(palette)] for i, v in enumerate(dict.fromkeys(r["variant"] for r in rows))}
    fig, axes = plt.subplots(len(configs), 2 if speedup else 1, squeeze=False,
                             figsize=(11 if speedup else 6, 4 * len(configs)))
    for row_axes, config in zip(axes, configs):
        by_variant = defaultdict(dict)
        for r in rows:
            if r["config"] == config:
                by_variant[r["variant"]][r["threads"]] = r
        variants = list(by_variant)
        ax = row_axes[0]
        width = 0.8 / len(variants)
        for i, v in enumerate(variants):
            pts = [by_variant[v][t] for t in threads if t in by_variant[v]]
            xs = [threads.index(p["threads"]) + (i - (len(variants) - 1) / 2) * width for p in pts]
            med = [p["median_s"] * 1e3 for p in pts]
            err = [[p["median_s"] * 1e3 - p["min_s"] * 1e3 for p in pts],
                   [p["max_s"] * 1e3 - p["median_s"] * 1e3 for p in pts]]
            ax.bar(xs, med, width, yerr=err, capsize=3, label=v, color=colour[v])
        meds = [r["median_s"] for r in rows if r["config"] == config]
        if min(meds) > 0 and max(meds) / min(meds) > 20:
            ax.set_yscale("log")
        ax.set_xticks(range(len(threads)), [str(t) for t in threads])
        ax.set_xlabel("threads")
        ax.set_ylabel("median time (ms), min-max bars")
        ax.set_title(f"{suite}{': ' + config if config else ''}")
        ax.legend(fontsize="small")
        if speedup:
            ax = row_axes[1]
            # TaskMan's measure: speed-up over the serial program where the suite has one, else over
            # each variant's own time at the fewest threads.
            serial = by_variant.get("serial", {}).get(1)
            for v in variants:
                ts = [t for t in threads if t in by_variant[v]]
                if len(ts) < 2:
                    continue
                base = serial["median_s"] if serial else by_variant[v][ts[0]]["median_s"]
                ax.plot(ts, [base / by_variant[v][t]["median_s"] for t in ts], marker="o", label=v,
                        color=colour[v])
            ax.plot(threads, [t / threads[0] for t in threads], linestyle=":", color="grey", label="linear")
            ax.set_xticks(threads)
            ax.set_xlabel("threads")
            ax.set_ylabel("speed-up over serial" if serial else f"speed-up over {threads[0]} thread(s)")
            ax.set_title(f"{suite}: speed-up")
            ax.legend(fontsize="small")
    return save(fig, out_dir, suite)


def plot_overhead(path, out_dir):
    """TaskMan's Figures 5-6: overhead against mean task length, a panel per shape and distribution,
    a line per runtime; one PNG per thread count."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    suite = rows[0]["suite"]
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    dists = list(dict.fromkeys(r["distribution"] for r in rows))
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    pngs = []
    for threads in sorted({int(r["threads"]) for r in rows}):
        fig, axes = plt.subplots(len(shapes), len(dists), squeeze=False, sharex=True,
                                 figsize=(5 * len(dists), 3.8 * len(shapes)))
        for i, shape in enumerate(shapes):
            for j, dist in enumerate(dists):
                ax = axes[i][j]
                for k, v in enumerate(variants):
                    pts = sorted((float(r["mean_us"]), float(r["overhead"]) * 100) for r in rows
                                 if r["shape"] == shape and r["distribution"] == dist and r["variant"] == v
                                 and int(r["threads"]) == threads and r["overhead"] != "")
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v,
                                color=palette[k % len(palette)], linestyle=":" if v == "serial" else "-")
                ax.set_xscale("log")
                ax.set_yscale("symlog", linthresh=1)
                if all(float(r["overhead"]) >= 0 for r in rows if r["overhead"] != ""):
                    ax.set_ylim(bottom=0)
                ax.axhline(0, color="grey", linewidth=0.5)
                ax.set_title(f"{suite}: {shape}, {dist}, {threads} thread{'s' if threads > 1 else ''}")
                ax.set_xlabel("mean task length (µs)")
                ax.set_ylabel("overhead (%), (T - T_ideal) / T_ideal")
                ax.legend(fontsize="small")
        pngs.append(save(fig, out_dir, f"{csv_name(path)}_{threads}t"))
    return pngs


def plot_bandwidth(path, out_dir):
    """HAM's Figure 6: bandwidth against transfer size, a panel per backend, a line per variant (the
    raw transfer dotted)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    suite = rows[0]["suite"]
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, len(backends), squeeze=False, figsize=(5 * len(backends), 4))
    for ax, backend in zip(axes[0], backends):
        mine = [r for r in rows if r["backend"] == backend]
        for k, v in enumerate(dict.fromkeys(r["variant"] for r in mine)):
            pts = sorted((int(r["bytes"]), float(r["gib_per_s"])) for r in mine if r["variant"] == v)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=v, color=palette[k % len(palette)],
                    linestyle=":" if v.startswith("raw") else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("transfer size (bytes)")
        ax.set_ylabel("bandwidth (GiB/s, median)")
        ax.set_title(f"{suite}: {backend}")
        ax.legend(fontsize="small")
    return save(fig, out_dir, csv_name(path))


def plot_in_flight(path, out_dir):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    series = defaultdict(list)
    for r in rows:
        series[r["series"]].append((int(r["events_in_flight"]), float(r["events_per_s"])))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        pts.sort()
        style = "s" if len(pts) == 1 else "-o"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name)
    ax.set_xlabel("events in flight")
    ax.set_ylabel("events / s")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    ax.set_title(csv_name(path))
    return save(fig, out_dir, csv_name(path))


def plot_timeline(path, out_dir):
    with open(path, newline="") as f:
        rows = [(r["label"], int(r["event"]), float(r["start_s"]), float(r["end_s"])) for r in csv.DictReader(f)]
    labels = list(dict.fromkeys(r[0] for r in rows))
    colours = {label: plt.cm.tab20(i % 20) for i, label in enumerate(labels)}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for label, event, start, end in rows:
        top.barh(event, end - start, left=start, height=0.8, color=colours[label])
    top.set_ylabel("event")
    top.invert_yaxis()
    top.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colours[l]) for l in labels], labels=labels, fontsize=7,
               loc="upper left", bbox_to_anchor=(1.01, 1))
    edges = sorted([(s, 1) for _, _, s, _ in rows] + [(e, -1) for _, _, _, e in rows])
    xs, ys, running = [0.0], [0], 0
    for t, d in edges:
        xs.append(t)
        ys.append(running)
        running += d
        xs.append(t)
        ys.append(running)
    bottom.plot(xs, ys)
    bottom.set_ylabel("modules running")
    bottom.set_xlabel("time (s)")
    top.set_title(csv_name(path))
    return save(fig, out_dir, csv_name(path))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True, help="folder for the PNGs")
    p.add_argument("csv", nargs="+")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for path in a.csv:
        with open(path, newline="") as f:
            columns = next(csv.reader(f), [])
        if "overhead" in columns:
            pngs = plot_overhead(path, a.out)
        elif "gib_per_s" in columns:
            pngs = [plot_bandwidth(path, a.out)]
        elif "events_in_flight" in columns and "events_per_s" in columns:
            pngs = [plot_in_flight(path, a.out)]
        elif {"start_s", "end_s", "event", "label"} <= set(columns):
            pngs = [plot_timeline(path, a.out)]
        else:
            pngs = [plot_suite(path, a.out)]
        for png in pngs:
            if png:
                print(f"plot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
