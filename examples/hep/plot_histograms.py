#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plot a hep job's histograms (the HDF5 layout of hep_layout.py) as PNG files.

usage: plot_histograms.py FILE.h5 --out DIR [--log NAME]... [--linear NAME]... [--log-range R]
                          [--overlay NAME]

Writes, into DIR (created if needed), and prints the path of each file:
  NAME.png          each histogram of /histograms as a step histogram, its title and xlabel
                    attributes, entries, underflow and overflow in the legend;
  lumi_means.png    from /lumi_histograms: each histogram's mean per lumi section (error bars:
                    the standard error of the mean), lumis as /lumis lists them;
  lumi_NAME.png     the --overlay histogram (jet_pt by default) of each lumi, normalised to unit
                    area, overlaid;
  summary.png       all histograms in one grid.
The y axis is logarithmic for --log NAME, linear for --linear NAME, and otherwise logarithmic when the
non-empty bins span --log-range (1000) or more. Exit 0; 1 when the file has no /histograms;
2 when it cannot be read.
"""
import argparse
import math
import os
import sys

try:
    import h5py
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    sys.exit(f"plot_histograms.py: {sys.executable} cannot import {e.name} "
             "(apt-get install python3-h5py python3-matplotlib)")

import hep_layout as layout


def text_attr(ds, name, default):
    return layout.attr_text(ds.attrs.get(name, default)) or default


def wants_log(name, counts, args):
    """The y scale of one histogram: the user's choice, else by the dynamic range of its bins."""
    positive = counts[counts > 0]
    if not len(positive):
        return False  # nothing to show on a log axis
    if name in args.log:
        return True
    if name in args.linear:
        return False
    return positive.max() / positive.min() >= args.log_range


def draw(ax, name, ds, args, small=False):
    counts = ds[()].astype(np.float64)
    _, edges = layout.histogram_edges(ds)
    inside = counts[1:-1]
    label = f"{int(inside.sum())} entries\nunderflow {int(counts[0])}, overflow {int(counts[-1])}"
    ax.stairs(inside, edges, label=label, linewidth=1.2)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_title(text_attr(ds, "title", name), fontsize=9 if small else 11)
    ax.set_xlabel(text_attr(ds, "xlabel", name), fontsize=8 if small else 10)
    ax.set_ylabel("entries", fontsize=8 if small else 10)
    top = max(inside.max(initial=0), 1)
    if wants_log(name, inside, args):  # headroom above the highest bin for the legend
        ax.set_yscale("log")
        ax.set_ylim(0.5, top * 30)
    else:
        ax.set_ylim(0, top * 1.3)
    ax.legend(fontsize=6 if small else 8, frameon=False, loc="upper right")
    if small:
        ax.tick_params(labelsize=7)


def save(fig, path, written):
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)


def grid(n):
    cols = max(1, math.ceil(math.sqrt(n)))
    return math.ceil(n / cols), cols


def lumi_labels(f):
    if layout.LUMIS not in f:
        return None
    lumis = f[layout.LUMIS][()]
    return [f"{r}:{l}" for r, l in zip(lumis["run"], lumis["lumi"])]


def plot_lumi_means(f, names, out, written):
    group = f[layout.LUMI_HISTOGRAMS_GROUP]
    names = [n for n in names if n in group]
    labels = lumi_labels(f)
    rows, cols = grid(len(names))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        ds = group[name]
        _, edges = layout.histogram_edges(ds)
        centres = (edges[:-1] + edges[1:]) / 2
        counts = ds[()][:, 1:-1].astype(np.float64)
        n = counts.sum(axis=1)
        with np.errstate(all="ignore"):
            mean = counts @ centres / n
            spread = np.sqrt(np.maximum(counts @ centres**2 / n - mean**2, 0))
            error = spread / np.sqrt(n)
        x = np.arange(len(n))
        ax.errorbar(x, mean, yerr=error, fmt="o", markersize=3, capsize=2)
        ax.set_title(f"{text_attr(ds, 'title', name)}: mean per lumi", fontsize=9)
        ax.set_ylabel(f"mean {text_attr(ds, 'xlabel', name)}", fontsize=8)
        if labels is not None and len(labels) == len(n) and len(n) <= 12:
            ax.set_xticks(x, labels, rotation=45, fontsize=7)
            ax.set_xlabel("run:lumi", fontsize=8)
        else:
            ax.set_xlabel(f"lumi (row of {layout.LUMIS})", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    save(fig, os.path.join(out, "lumi_means.png"), written)


def plot_lumi_overlay(f, name, out, written):
    ds = f[layout.LUMI_HISTOGRAMS_GROUP][name]
    _, edges = layout.histogram_edges(ds)
    counts = ds[()][:, 1:-1].astype(np.float64)
    labels = lumi_labels(f) or [str(i) for i in range(len(counts))]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = plt.cm.viridis(np.linspace(0, 1, max(len(counts), 1)))
    for row, colour, label in zip(counts, colours, labels):
        if row.sum() > 0:
            ax.stairs(row / row.sum(), edges, color=colour, label=f"lumi {label}", linewidth=1)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_title(f"{text_attr(ds, 'title', name)}, lumi by lumi (unit area)")
    ax.set_xlabel(text_attr(ds, "xlabel", name))
    ax.set_ylabel("fraction of the lumi's entries")
    if len(counts) <= 12:
        ax.legend(fontsize=7, frameon=False)
    else:
        ax.figure.colorbar(plt.cm.ScalarMappable(cmap="viridis", norm=plt.Normalize(0, len(counts) - 1)),
                           ax=ax, label=f"lumi (row of {layout.LUMIS})")
    save(fig, os.path.join(out, f"lumi_{name}.png"), written)


def plot(f, args):
    written = []
    histograms = f[layout.HISTOGRAMS_GROUP]
    # the layout's order, then any others by name
    names = [n for n in layout.HISTOGRAMS if n in histograms] + sorted(set(histograms) - set(layout.HISTOGRAMS))
    for name in names:
        fig, ax = plt.subplots(figsize=(6, 4))
        draw(ax, name, histograms[name], args)
        save(fig, os.path.join(args.out, f"{name}.png"), written)
    if layout.LUMI_HISTOGRAMS_GROUP in f:
        plot_lumi_means(f, names, args.out, written)
        lumi_group = f[layout.LUMI_HISTOGRAMS_GROUP]
        overlay = args.overlay if args.overlay in lumi_group else next(iter(lumi_group), None)
        if overlay is not None:
            plot_lumi_overlay(f, overlay, args.out, written)
    else:
        print(f"plot_histograms: no {layout.LUMI_HISTOGRAMS_GROUP}: no lumi-by-lumi view", file=sys.stderr)
    rows, cols = grid(len(names))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        draw(ax, name, histograms[name], args, small=True)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    save(fig, os.path.join(args.out, "summary.png"), written)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="the job's HDF5 output")
    parser.add_argument("--out", required=True, help="folder for the PNG files")
    parser.add_argument("--log", action="append", default=[], metavar="NAME", help="log y for this histogram")
    parser.add_argument("--linear", action="append", default=[], metavar="NAME", help="linear y for this histogram")
    parser.add_argument("--log-range", type=float, default=1000.0,
                        help="automatic log y when max/min of the non-empty bins reaches this (default 1000)")
    parser.add_argument("--overlay", default="jet_pt", help="the histogram overlaid lumi by lumi (default jet_pt)")
    args = parser.parse_args()
    try:
        f = h5py.File(args.file, "r")
    except OSError as e:
        print(f"plot_histograms: cannot read {args.file}: {e}", file=sys.stderr)
        return 2
    with f:
        if layout.HISTOGRAMS_GROUP not in f or not len(f[layout.HISTOGRAMS_GROUP]):
            print(f"plot_histograms: {args.file} has no histograms in {layout.HISTOGRAMS_GROUP}", file=sys.stderr)
            return 1
        os.makedirs(args.out, exist_ok=True)
        for path in plot(f, args):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
