#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots for heddle-fw scan DIR: DIR/scan.png (throughput against events in flight, the study's
Figures 3 and 4) and DIR/modules_running.png (modules running over one event's time, Figure 5)."""
import csv
import sys
from collections import defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
except ImportError:
    sys.exit(f"scan_plot.py: {sys.executable} cannot import matplotlib (apt-get install python3-matplotlib)")

out = sys.argv[1]
series = defaultdict(list)
with open(f"{out}/scan.csv", newline="") as f:
    for r in csv.DictReader(f):
        series[r["series"]].append((int(r["events_in_flight"]), float(r["median_events_per_s"]),
                                    float(r["min_events_per_s"]), float(r["max_events_per_s"])))
fig, ax = plt.subplots(figsize=(7, 4.5))
for name, pts in series.items():
    pts.sort()
    x = [p[0] for p in pts]
    y = [p[1] for p in pts]
    err = [[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]]
    style = "--" if name == "single-threaded processor" else "-o"
    ax.errorbar(x, y, yerr=err, fmt=style, capsize=3, label=name)
ax.set_xlabel("events in flight (processes, for single-threaded processes)")
ax.xaxis.set_major_locator(MaxNLocator(integer=True))
ax.set_ylabel("events / s (median)")
ax.set_ylim(bottom=0)
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
ax.set_title("Throughput against events in flight")
fig.tight_layout()
fig.savefig(f"{out}/scan.png", dpi=120)

t, n = [], []
with open(f"{out}/modules_running.csv", newline="") as f:
    for r in csv.DictReader(f):
        t.append(float(r["time_s"]) * 1e3)
        n.append(int(r["running"]))
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.step(t, n, where="post")
ax.set_xlabel("time since the event's first module started (ms)")
ax.set_ylabel("modules running")
ax.set_ylim(bottom=0)
ax.grid(alpha=0.3)
ax.set_title("Modules of one event running over its time")
fig.tight_layout()
fig.savefig(f"{out}/modules_running.png", dpi=120)
