# SPDX-License-Identifier: Apache-2.0
"""Percentiles and readable durations, shared by the summary's tables and its JSON."""
import math


def percentile(sorted_values, q):
    """Nearest rank: the smallest value with at least q (0 < q <= 1) of the values at or below it
    (the median of 10, 20 is 10; the p99 of 1..100 is 99). A value the data holds, never an
    interpolation; None for no values."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q * len(sorted_values) - 1e-9))  # 1e-9: q * n rounding above an integer
    return sorted_values[rank - 1]


def distribution(values):
    """count, total, mean, median, p99 of integer ns values, in µs (None where there are none)."""
    values = sorted(values)
    total = sum(values)
    return {
        "count": len(values),
        "total_us": us(total),
        "mean_us": us(total / len(values)) if values else None,
        "median_us": us(percentile(values, 0.5)),
        "p99_us": us(percentile(values, 0.99)),
    }


def us(ns):
    return None if ns is None else ns / 1000


def fmt_us(value):
    """A duration in µs, in the unit that reads best: 850 ns, 12.5 µs, 3.20 ms, 1.25 s."""
    if value is None:
        return "-"
    ns = value * 1000
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{fmt_number(ns / scale)} {unit}"
    return f"{ns:.0f} ns"


def fmt_number(x):
    """Three significant digits without an exponent (999.6 reads 1000)."""
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_share(share):
    return "-" if share is None else f"{100 * share:.1f}%"


def table(headers, rows, indent="  "):
    """Rows of strings as aligned columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells):
        parts = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return (indent + "  ".join(parts)).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)])
