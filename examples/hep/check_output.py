#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validate a hep job's HDF5 output (and its JSON-lines twin) against the layout (hep_layout.py).

usage: check_output.py FILE.h5 [--jsonl FILE.jsonl] [--max-problems N]

Checks: the file attributes; /events, /jets, /fat_jets, /lumis with every field in the right kind
and size; /events in strictly ascending `event`; each event's rows [first_jet, first_jet + n_jets)
and [first_fat_jet, first_fat_jet + n_fat_jets) contiguous, covering /jets and /fat_jets exactly,
the rows' `event` matching; jets pt-ordered within an event; pt, eta, phi (and a fat jet's mass)
consistent with px, py, pz, e; counts consistent; every event passed dijet or boosted; each histogram
[nbins + 2] u8 counts with low < high, its per-lumi rows summing to it; /lumis in (run, lumi) order.
With --jsonl: one JSON object per /events row, every value equal to the HDF5 one (integers exactly,
floats exactly after parsing: the C++ side prints 17 significant digits).

Exit 0 with one line "check_output: N events, M jets, K fat jets, H histograms: ok"; 1 with every
problem found (up to --max-problems, 20), each naming dataset, row and field; 2 when a file cannot be
read.
"""
import argparse
import json
import math
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    sys.exit(f"check_output.py: {sys.executable} cannot import {e.name} (apt-get install python3-h5py)")

import hep_layout as layout

# Kinematic tolerances: the values are computed in double precision from the same four-vector.
REL_TOL = 1e-9
ABS_TOL = 1e-9


class TooManyProblems(Exception):
    pass


class Problems:
    """The problems found, up to a limit; adding one more raises TooManyProblems."""

    def __init__(self, limit):
        self.limit = limit
        self.messages = []
        self.stopped = False

    def add(self, where, what):
        if len(self.messages) >= self.limit:
            self.stopped = True
            raise TooManyProblems
        self.messages.append(f"{where}: {what}")

    def rows(self, dataset, field, mask, describe):
        """One problem per row where `mask` is true; describe(row) says what is wrong there."""
        for row in np.flatnonzero(mask):
            self.add(f"{dataset} row {row} field {field}", describe(int(row)))


def check_file_attrs(f, problems):
    for name, kind in layout.FILE_ATTRS.items():
        if name not in f.attrs:
            problems.add(f"/ attribute {name}", "missing")
            continue
        check_attr_kind(f"/ attribute {name}", f.attrs[name], kind, problems)
    if "format" in f.attrs and layout.attr_text(f.attrs["format"]) != layout.FORMAT:
        problems.add("/ attribute format", f"{f.attrs['format']!r}, expected {layout.FORMAT!r}")


def attr_is(value, kind):
    """True when an attribute value is a string, or a scalar float or unsigned integer."""
    if kind == "string":
        return layout.attr_text(value) is not None
    value = np.asarray(value)
    return value.shape == () and value.dtype.kind == {"float": "f", "uint": "u"}[kind]


def check_attr_kind(where, value, kind, problems):
    if not attr_is(value, kind):
        problems.add(where, f"{value!r} is not a {kind}" + ("" if kind == "string" else " scalar"))


def uint_attr(f, name):
    """A file attribute as int, or None when it is missing or not an unsigned scalar."""
    return int(f.attrs[name]) if name in f.attrs and attr_is(f.attrs[name], "uint") else None


def read_table(f, path, fields, problems):
    """The table as a numpy structured array, or None when it is missing or a field is wrong."""
    if path not in f:
        problems.add(path, "missing")
        return None
    ds = f[path]
    if not isinstance(ds, h5py.Dataset) or ds.dtype.names is None or ds.ndim != 1:
        problems.add(path, f"not a 1-D compound dataset ({getattr(ds, 'dtype', 'a group')})")
        return None
    usable = True
    for name, code in fields:
        if name not in ds.dtype.names:
            problems.add(f"{path} field {name}", "missing")
            usable = False
        elif not layout.same_kind(ds.dtype[name], code):
            problems.add(f"{path} field {name}", f"dtype {ds.dtype[name]}, expected {code}")
            usable = False
    for name in set(ds.dtype.names) - {n for n, _ in fields}:
        problems.add(f"{path} field {name}", "not in the layout")
    return ds[()] if usable else None


def check_events(ev, problems):
    p = "/events"
    e = ev["event"]
    bad = np.zeros(len(e), bool)
    bad[1:] = e[1:] <= e[:-1]
    problems.rows(p, "event", bad, lambda i: f"{e[i]} not greater than the previous row's {e[i - 1]}")
    for flag in ("dijet", "boosted"):
        problems.rows(p, flag, ev[flag] > 1, lambda i: f"{ev[flag][i]}, expected 0 or 1")
    problems.rows(p, "dijet/boosted", (ev["dijet"] == 0) & (ev["boosted"] == 0),
                  lambda i: f"event {e[i]} passed neither the dijet nor the boosted path")
    for field in ("rho", "met", "sum_et"):
        v = ev[field]
        problems.rows(p, field, ~(np.isfinite(v) & (v >= 0)), lambda i: f"{v[i]!r} is not finite and >= 0")
    phi = ev["met_phi"]
    problems.rows(p, "met_phi", ~(np.isfinite(phi) & (phi >= -math.pi) & (phi <= 2 * math.pi)),
                  lambda i: f"{phi[i]!r} is not an angle")
    for field in ("n_jets", "n_fat_jets"):
        problems.rows(p, field, ev[field] > ev["n_candidates"],
                      lambda i: f"{ev[field][i]} jets from {ev['n_candidates'][i]} candidates")


def check_links(ev, count, first, rows, path, problems):
    """The events' row ranges in `rows` (/jets or /fat_jets): contiguous, covering it, `event`
    matching. Returns each row's owning /events row, or None when the ranges are broken."""
    n = ev[count].astype(np.int64)
    start = ev[first].astype(np.int64)
    end = start + n
    bad = np.zeros(len(ev), bool)
    if len(ev):
        bad[0] = start[0] != 0
        bad[1:] = start[1:] != end[:-1]

    def describe(i):
        previous = end[i - 1] if i else 0
        gap = start[i] - previous
        kind = f"a gap of {gap}" if gap > 0 else f"an overlap of {-gap}"
        return f"{start[i]}, but the previous rows end at {previous} ({kind} in {path})"

    problems.rows("/events", first, bad, describe)
    covered = int(end[-1]) if len(ev) else 0
    if covered != len(rows):
        problems.add(f"/events row {len(ev) - 1} field {first}" if len(ev) else "/events",
                     f"the events' ranges cover {covered} rows, {path} has {len(rows)}")
    if bad.any() or covered != len(rows):
        return None
    owner = np.repeat(np.arange(len(ev)), n)
    events = ev["event"][owner]
    problems.rows(path, "event", rows["event"] != events,
                  lambda j: f"{rows['event'][j]}, but the row is in /events row {owner[j]} (event {events[j]})")
    return owner


def check_pt_order(jets, owner, problems):
    pt = jets["pt"]
    bad = np.zeros(len(jets), bool)
    bad[1:] = (owner[1:] == owner[:-1]) & (pt[1:] > pt[:-1])
    problems.rows("/jets", "pt", bad, lambda j: f"{pt[j]!r} above the previous jet's {pt[j - 1]!r} of the same event")


def check_kinematics(rows, path, problems):
    finite = np.ones(len(rows), bool)
    for name in rows.dtype.names:
        if rows.dtype[name].kind == "f":
            v = rows[name]
            problems.rows(path, name, ~np.isfinite(v), lambda j: f"{v[j]!r} is not finite")
            finite &= np.isfinite(v)
    px, py, pz, e = (rows[k] for k in ("px", "py", "pz", "e"))
    with np.errstate(all="ignore"):
        pt = np.hypot(px, py)
        eta = np.arcsinh(pz / pt)
        phi = np.arctan2(py, px)
        dphi = np.remainder(rows["phi"] - phi + math.pi, 2 * math.pi) - math.pi
    moving = finite & (pt > 0)
    problems.rows(path, "pt", finite & ~np.isclose(rows["pt"], pt, rtol=REL_TOL, atol=ABS_TOL),
                  lambda j: f"{rows['pt'][j]!r}, but hypot(px, py) = {pt[j]!r}")
    problems.rows(path, "eta", moving & ~np.isclose(rows["eta"], eta, rtol=REL_TOL, atol=ABS_TOL),
                  lambda j: f"{rows['eta'][j]!r}, but asinh(pz / pt) = {eta[j]!r}")
    problems.rows(path, "phi", moving & ~(np.abs(dphi) <= ABS_TOL),
                  lambda j: f"{rows['phi'][j]!r}, but atan2(py, px) = {phi[j]!r}")
    problems.rows(path, "e", finite & (e < 0), lambda j: f"{e[j]!r} is negative")
    if "mass" in rows.dtype.names:
        m = rows["mass"]
        with np.errstate(all="ignore"):
            m2 = e * e - (px * px + py * py + pz * pz)
        problems.rows(path, "mass", finite & ~(np.abs(np.sign(m) * m * m - m2) <= REL_TOL * e * e + ABS_TOL),
                      lambda j: f"{m[j]!r}, but sqrt(e^2 - p^2) = {math.sqrt(max(m2[j], 0))!r}")


def check_jet_corrections(jets, problems):
    for field, ok in (("area", jets["area"] >= 0), ("raw_pt", jets["raw_pt"] >= 0), ("jec", jets["jec"] > 0)):
        problems.rows("/jets", field, ~ok, lambda j: f"{jets[field][j]!r} out of range")


def check_histogram(ds, path, problems):
    """True when `ds` has u8 counts and valid low/high/title/xlabel attributes."""
    ok = True
    if not isinstance(ds, h5py.Dataset):
        problems.add(path, "not a dataset")
        return False
    if not layout.same_kind(ds.dtype, layout.HISTOGRAM_COUNTS):
        problems.add(path, f"dtype {ds.dtype}, expected {layout.HISTOGRAM_COUNTS}")
        ok = False
    if ds.ndim == 0 or ds.shape[-1] < 3:
        problems.add(path, f"shape {ds.shape}: not nbins + 2 counts with nbins >= 1")
        ok = False
    for name, kind in layout.HISTOGRAM_ATTRS.items():
        if name not in ds.attrs:
            problems.add(f"{path} attribute {name}", "missing")
            ok = False
        else:
            before = len(problems.messages)
            check_attr_kind(f"{path} attribute {name}", ds.attrs[name], kind, problems)
            ok = ok and len(problems.messages) == before
    if ok and not (ds.attrs["low"] < ds.attrs["high"]):
        problems.add(f"{path} attribute low", f"{ds.attrs['low']!r} not below high {ds.attrs['high']!r}")
        ok = False
    return ok


def check_histograms(f, n_lumis, problems):
    """Checks both histogram groups; returns how many histograms /histograms holds."""
    hg, lg = layout.HISTOGRAMS_GROUP, layout.LUMI_HISTOGRAMS_GROUP
    for group in (hg, lg):
        if group not in f:
            problems.add(group, "missing")
    if hg not in f or lg not in f:
        return len(f[hg]) if hg in f else 0
    for name in layout.HISTOGRAMS:
        if name not in f[hg]:
            problems.add(f"{hg}/{name}", "missing")
    for name in set(f[lg]) - set(f[hg]):
        problems.add(f"{lg}/{name}", f"not in {hg}")
    for name in f[hg]:
        total, per_lumi = f[hg][name], f[lg].get(name)
        total_ok = check_histogram(total, f"{hg}/{name}", problems)
        if total_ok and total.ndim != 1:
            problems.add(f"{hg}/{name}", f"shape {total.shape}, expected 1-D")
            total_ok = False
        if per_lumi is None:
            problems.add(f"{lg}/{name}", "missing")
            continue
        if not (check_histogram(per_lumi, f"{lg}/{name}", problems) and total_ok):
            continue
        check_lumi_histogram(total, per_lumi, n_lumis, problems)
    return len(f[hg])


def check_lumi_histogram(total, per_lumi, n_lumis, problems):
    path = per_lumi.name
    if per_lumi.shape[1:] != total.shape:
        problems.add(path, f"shape {per_lumi.shape}, but {total.name} has {total.shape}")
        return
    if n_lumis is not None and per_lumi.shape[0] != n_lumis:
        problems.add(path, f"{per_lumi.shape[0]} rows, but {layout.LUMIS} has {n_lumis} lumis")
    for name, kind in layout.HISTOGRAM_ATTRS.items():
        a, b = total.attrs[name], per_lumi.attrs[name]
        if (layout.attr_text(a) != layout.attr_text(b)) if kind == "string" else (a != b):
            problems.add(f"{path} attribute {name}", f"{b!r}, but {total.name} has {a!r}")
    counts, rows = total[()], per_lumi[()]
    summed = rows.sum(axis=0, dtype=np.uint64)
    for b in np.flatnonzero(summed != counts):
        problems.add(f"{path} bin {b}", f"the lumis sum to {summed[b]}, {total.name} has {counts[b]}")


def check_lumis(f, lumis, ev, problems):
    p = layout.LUMIS
    key = (lumis["run"].astype(np.uint64) << np.uint64(32)) | lumis["lumi"].astype(np.uint64)
    bad = np.zeros(len(lumis), bool)
    bad[1:] = key[1:] <= key[:-1]
    problems.rows(p, "lumi", bad, lambda i: f"({lumis['run'][i]}, {lumis['lumi'][i]}) not after the previous row's "
                                            f"({lumis['run'][i - 1]}, {lumis['lumi'][i - 1]})")
    processed = uint_attr(f, "events_processed")
    if processed is not None and int(lumis["events"].sum()) > processed:
        problems.add(f"{p} field events", f"the lumis hold {lumis['events'].sum()} events, more than the "
                                          f"{processed} the job processed")
    if ev is None or bad.any():
        return
    ev_key = (ev["run"].astype(np.uint64) << np.uint64(32)) | ev["lumi"].astype(np.uint64)
    if len(key):
        where = np.minimum(np.searchsorted(key, ev_key), len(key) - 1)
        unknown = key[where] != ev_key
    else:
        where, unknown = np.zeros(len(ev), np.int64), np.ones(len(ev), bool)
    problems.rows("/events", "lumi", unknown, lambda i: f"({ev['run'][i]}, {ev['lumi'][i]}) is not in {p}")
    selected = np.bincount(where[~unknown], minlength=len(key))
    problems.rows(p, "events", selected > lumis["events"].astype(np.int64),
                  lambda i: f"{lumis['events'][i]}, but {selected[i]} selected events in /events")


def check_counts(f, ev, problems):
    selected, processed = uint_attr(f, "events_selected"), uint_attr(f, "events_processed")
    if selected is not None and ev is not None and selected != len(ev):
        problems.add("/ attribute events_selected", f"{selected}, but /events has {len(ev)} rows")
    if selected is not None and processed is not None and selected > processed:
        problems.add("/ attribute events_selected", f"{selected} above events_processed {processed}")


def same_value(text_value, value, code):
    """The JSON value equals the HDF5 one: integers exactly, floats exactly after parsing (null for NaN)."""
    if isinstance(text_value, bool):
        return False
    if code[0] in "ui":
        return isinstance(text_value, int) and text_value == value
    if text_value is None or (isinstance(text_value, float) and math.isnan(text_value)):
        return math.isnan(value)
    return isinstance(text_value, (int, float)) and float(text_value) == value


def check_object(obj, columns, row, fields, where, source, problems, nested=()):
    """One JSON object against one row of `columns` (a table's fields as lists); `nested`: the
    keys of its lists, checked by the caller."""
    if not isinstance(obj, dict):
        problems.add(where, f"{type(obj).__name__}, expected an object")
        return
    for name, code in fields:
        if name not in obj:
            problems.add(f"{where} field {name}", "missing")
        elif not same_value(obj[name], columns[name][row], code):
            problems.add(f"{where} field {name}", f"{obj[name]!r} in the JSON, {columns[name][row]!r} in {source} row {row}")
    for name in set(obj) - {n for n, _ in fields} - set(nested):
        problems.add(f"{where} field {name}", "not in the layout")


def check_jsonl(path, ev, tables, problems):
    """The JSON-lines twin row by row against /events and each event's rows of /jets, /fat_jets
    (`tables`: path -> the table's fields as lists, for the tables whose row ranges are sound)."""
    columns = {name: ev[name].tolist() for name in ev.dtype.names}
    with open(path, encoding="utf-8") as text:
        content = text.read().rstrip("\n")
    lines = content.split("\n") if content else []
    if len(lines) != len(ev):
        problems.add(path, f"{len(lines)} lines, /events has {len(ev)} rows")
    for i, line in enumerate(lines[:len(ev)]):
        where = f"{path} line {i + 1}"
        try:
            obj = json.loads(line)
        except ValueError as e:
            problems.add(where, f"not JSON ({e})")
            continue
        if isinstance(obj, dict) and "event" in obj and not same_value(obj["event"], columns["event"][i], "u8"):
            # another event's line: its other fields would only repeat that
            problems.add(f"{where} field event", f"{obj['event']!r} in the JSON, {columns['event'][i]} in /events row {i}")
            continue
        check_object(obj, columns, i, layout.JSON_EVENT_FIELDS, where, "/events", problems, ("jets", "fat_jets"))
        if not isinstance(obj, dict):
            continue
        for key, count, first, fields in (("jets", "n_jets", "first_jet", layout.JSON_JET_FIELDS),
                                          ("fat_jets", "n_fat_jets", "first_fat_jet", layout.JSON_FAT_JET_FIELDS)):
            if f"/{key}" not in tables:
                continue
            rows = obj.get(key)
            if not isinstance(rows, list) or len(rows) != columns[count][i]:
                problems.add(f"{where} field {key}", f"{rows!r:.60}, expected a list of {columns[count][i]} objects")
                continue
            for k, jet in enumerate(rows):
                check_object(jet, tables[f"/{key}"], columns[first][i] + k, fields, f"{where} {key}[{k}]",
                             f"/{key}", problems)


def check(path, jsonl, problems):
    """Runs every check; returns the summary counts (events, jets, fat jets, histograms)."""
    with h5py.File(path, "r") as f:
        check_file_attrs(f, problems)
        t = {p: read_table(f, p, fields, problems) for p, fields in layout.TABLES.items()}
        ev, jets, fat_jets, lumis = t["/events"], t["/jets"], t["/fat_jets"], t[layout.LUMIS]
        check_counts(f, ev, problems)
        linked = {}
        if ev is not None:
            check_events(ev, problems)
            for rows, p, count, first in ((jets, "/jets", "n_jets", "first_jet"),
                                          (fat_jets, "/fat_jets", "n_fat_jets", "first_fat_jet")):
                if rows is not None:
                    owner = check_links(ev, count, first, rows, p, problems)
                    if owner is not None:
                        linked[p] = {name: rows[name].tolist() for name in rows.dtype.names} if jsonl else None
                        if p == "/jets":
                            check_pt_order(rows, owner, problems)
        for rows, p in ((jets, "/jets"), (fat_jets, "/fat_jets")):
            if rows is not None:
                check_kinematics(rows, p, problems)
        if jets is not None:
            check_jet_corrections(jets, problems)
        if lumis is not None:
            check_lumis(f, lumis, ev, problems)
        n_histograms = check_histograms(f, None if lumis is None else len(lumis), problems)
        if jsonl and ev is not None:
            check_jsonl(jsonl, ev, linked, problems)
        return [0 if x is None else len(x) for x in (ev, jets, fat_jets)] + [n_histograms]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", help="the job's HDF5 output")
    parser.add_argument("--jsonl", help="its JSON-lines twin, checked against it")
    parser.add_argument("--max-problems", type=int, default=20, help="stop after this many (default 20)")
    args = parser.parse_args()
    for name in filter(None, (args.file, args.jsonl)):
        try:
            open(name, "rb").close()
            if name == args.file:
                h5py.File(name, "r").close()
        except OSError as e:
            print(f"check_output: cannot read {name}: {e}", file=sys.stderr)
            return 2
    problems = Problems(args.max_problems)
    counts = None
    try:
        counts = check(args.file, args.jsonl, problems)
    except TooManyProblems:
        pass
    if problems.messages:
        n = len(problems.messages)
        print(f"check_output: {args.file}: {n} problem{'s' if n > 1 else ''}"
              f"{' (stopped there)' if problems.stopped else ''}:", file=sys.stderr)
        for message in problems.messages:
            print(f"  {message}", file=sys.stderr)
        return 1
    n_events, n_jets, n_fat_jets, n_histograms = counts
    print(f"check_output: {n_events} events, {n_jets} jets, {n_fat_jets} fat jets, {n_histograms} histograms: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
