#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of the hep example's Python tools (examples/hep/): check_output.py, compare_outputs.py and
plot_histograms.py, run as a user runs them, on small synthetic job outputs that follow the layout
(hep_layout.py), written with h5py, with their JSON-lines twins.

usage: python_tools_test.py [unittest options]   (exit 77: skipped, this python3 lacks h5py or matplotlib)
"""
import copy
import math
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

try:
    import h5py
    import matplotlib  # noqa: F401  (plot_histograms.py needs it)
    import numpy as np
except ImportError as e:
    print(f"skipped: {sys.executable} cannot import {e.name} (apt-get install python3-h5py python3-matplotlib)")
    sys.exit(77)

TOOLS = Path(__file__).resolve().parents[2] / "examples" / "hep"
sys.path.insert(0, str(TOOLS))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (the tools' runs: PYTHONDONTWRITEBYTECODE)
import hep_layout as layout  # noqa: E402

# name -> (nbins, low, high, title, xlabel)
BINNING = {
    "jet_pt": (20, 0.0, 200.0, "Jet p_T", "p_T [GeV]"),
    "jet_eta": (20, -5.0, 5.0, "Jet eta", "eta"),
    "jet_mass": (20, 0.0, 40.0, "Jet mass", "m [GeV]"),
    "fat_jet_groomed_mass": (20, 0.0, 200.0, "Fat jet groomed mass", "m_SD [GeV]"),
    "rho": (20, 0.0, 40.0, "rho", "rho [GeV]"),
    "met": (20, 0.0, 100.0, "Missing E_T", "MET [GeV]"),
    "n_jets": (10, -0.5, 9.5, "Jets per event", "n_jets"),
    "n_candidates": (20, 0.0, 400.0, "Candidates per event", "n_candidates"),
}


def four_vectors(rng, n, pt_scale, mass_high):
    """n massive four-vectors, pt-ordered, with pt/eta/phi as generated (phi in [0, 2 pi), as
    FastJet's phi()): the checker sees rounding differences, not identical recomputed values."""
    pt = np.sort(rng.exponential(pt_scale, n) + 20.0)[::-1]
    eta = rng.uniform(-4.5, 4.5, n)
    phi = rng.uniform(0.0, 2 * math.pi, n)
    mass = rng.uniform(0.0, mass_high, n)
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    e = np.sqrt(px**2 + py**2 + pz**2 + mass**2)
    return dict(px=px, py=py, pz=pz, e=e, pt=pt, eta=eta, phi=phi), mass


def fill(values, name):
    nbins, low, high = BINNING[name][:3]
    index = np.clip(np.floor((np.asarray(values, float) - low) / (high - low) * nbins) + 1, 0, nbins + 1)
    return np.bincount(index.astype(int), minlength=nbins + 2).astype(np.uint64)


def synthetic(seed=1, lumis=((1, 1), (1, 2), (1, 3), (2, 1), (2, 2)), events_per_lumi=8):
    """A small job's content: {"attrs", table paths, "histograms": name -> dict}."""
    rng = np.random.default_rng(seed)
    ev, jets, fat, lumi_rows = [], [], [], []
    per_lumi = {name: [] for name in BINNING}
    number = 0
    for run, lumi in lumis:
        values = {name: [] for name in BINNING}
        for _ in range(events_per_lumi):
            number += int(rng.integers(1, 4))
            n_jets, n_fat = int(rng.integers(0, 6)), int(rng.integers(0, 3))
            if n_jets < 2 and n_fat == 0:
                n_fat = 1  # selected events pass a path
            j, jet_mass = four_vectors(rng, n_jets, 40.0, 20.0)
            raw_pt = j["pt"] * rng.uniform(1.0, 1.3, n_jets)
            jets += [(number, *row) for row in zip(j["px"], j["py"], j["pz"], j["e"], j["pt"], j["eta"], j["phi"],
                                                    rng.uniform(0.3, 0.7, n_jets), raw_pt, rng.uniform(0.9, 1.2, n_jets))]
            k, mass = four_vectors(rng, n_fat, 150.0, 180.0)
            groomed = mass * rng.uniform(0.2, 1.0, n_fat)
            fat += [(number, *row) for row in zip(k["px"], k["py"], k["pz"], k["e"], k["pt"], k["eta"], k["phi"],
                                                   mass, groomed)]
            n_candidates = int(rng.integers(60, 450))
            rho, met, met_phi = rng.uniform(5, 35), rng.exponential(25), rng.uniform(-math.pi, math.pi)
            ev.append((run, lumi, number, int(rng.poisson(20)), n_candidates, n_jets, n_fat, rho, met, met_phi,
                       met + rng.uniform(100, 900), int(n_jets >= 2), int(n_fat >= 1), 0, 0))
            for name, v in (("jet_pt", j["pt"]), ("jet_eta", j["eta"]), ("jet_mass", jet_mass),
                            ("fat_jet_groomed_mass", groomed),
                            ("rho", [rho]), ("met", [met]), ("n_jets", [n_jets]), ("n_candidates", [n_candidates])):
                values[name] += list(v)
        for name in BINNING:
            per_lumi[name].append(fill(values[name], name))
        lumi_rows.append((run, lumi, events_per_lumi + int(rng.integers(0, 4))))  # some not selected
    events = np.array(ev, dtype=layout.dtype(layout.EVENT_FIELDS))
    for count, first in (("n_jets", "first_jet"), ("n_fat_jets", "first_fat_jet")):
        events[first] = np.cumsum(events[count], dtype=np.uint64) - events[count]
    lumis_table = np.array(lumi_rows, dtype=layout.dtype(layout.LUMI_FIELDS))
    histograms = {}
    for name, (nbins, low, high, title, xlabel) in BINNING.items():
        rows = np.array(per_lumi[name], dtype=np.uint64)
        histograms[name] = dict(counts=rows.sum(axis=0), lumi_counts=rows, low=low, high=high, title=title, xlabel=xlabel)
    return {
        "attrs": dict(events_processed=np.uint64(lumis_table["events"].sum()),
                      events_selected=np.uint64(len(events)), format=layout.FORMAT),
        "/events": events,
        "/jets": np.array(jets, dtype=layout.dtype(layout.JET_FIELDS)),
        "/fat_jets": np.array(fat, dtype=layout.dtype(layout.FAT_JET_FIELDS)),
        layout.LUMIS: lumis_table,
        "histograms": histograms,
    }


def write_h5(content, path, aligned=False):
    """The content as hep::HDF5Output lays it out; `aligned`: compounds with C-struct padding."""
    with h5py.File(path, "w") as f:
        for name, value in content["attrs"].items():
            f.attrs[name] = value
        for table in ("/events", "/jets", "/fat_jets", layout.LUMIS):
            rows = content[table]
            if aligned:
                rows = rows.astype(np.dtype([(n, rows.dtype[n]) for n in rows.dtype.names], align=True))
            f.create_dataset(table, data=rows, chunks=(max(1, min(len(rows), 64)),), maxshape=(None,))
        totals, per_lumi = f.create_group(layout.HISTOGRAMS_GROUP), f.create_group(layout.LUMI_HISTOGRAMS_GROUP)
        for name, h in content["histograms"].items():
            for group, data in ((totals, h["counts"]), (per_lumi, h["lumi_counts"])):
                ds = group.create_dataset(name, data=data)
                for attr in layout.HISTOGRAM_ATTRS:
                    ds.attrs[attr] = h[attr]


def number(value, code):
    return str(int(value)) if code[0] in "ui" else format(float(value), ".17g")


def json_object(row, fields):
    return "{" + ",".join(f'"{name}":{number(row[name], code)}' for name, code in fields) + "}"


def write_jsonl(content, path):
    """The JSON-lines twin as the C++ side prints it: doubles with 17 significant digits."""
    with open(path, "w") as out:
        for row in content["/events"]:
            parts = [json_object(row, layout.JSON_EVENT_FIELDS)[1:-1]]
            for key, count, first, fields in (("jets", "n_jets", "first_jet", layout.JSON_JET_FIELDS),
                                              ("fat_jets", "n_fat_jets", "first_fat_jet", layout.JSON_FAT_JET_FIELDS)):
                rows = content[f"/{key}"][int(row[first]):int(row[first]) + int(row[count])]
                parts.append(f'"{key}":[' + ",".join(json_object(r, fields) for r in rows) + "]")
            out.write("{" + ",".join(parts) + "}\n")


def run(script, *args):
    return subprocess.run([sys.executable, str(TOOLS / script), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))


class ToolTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.good = synthetic()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, content, name="job.h5", **kw):
        path = self.dir / name
        write_h5(content, path, **kw)
        return path

    def twin(self, content, name="job.jsonl"):
        path = self.dir / name
        write_jsonl(content, path)
        return path


class CheckOutputTest(ToolTest):
    def check_fails(self, content, *expected, jsonl=None):
        """check_output refuses the file (exit 1), naming each `expected` text."""
        r = run("check_output.py", self.write(content), *(["--jsonl", jsonl] if jsonl else []))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for text in expected:
            self.assertIn(text, r.stderr)
        return r.stderr

    def test_accepts_a_good_file_and_its_twin(self):
        c = self.good
        self.assertGreater(len(c["/jets"]), 20)
        expected = (f"check_output: {len(c['/events'])} events, {len(c['/jets'])} jets, "
                    f"{len(c['/fat_jets'])} fat jets, 8 histograms: ok\n")
        for aligned in (False, True):
            r = run("check_output.py", self.write(c, aligned=aligned), "--jsonl", self.twin(c))
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, expected, ""))

    def test_accepts_a_job_that_selected_nothing(self):
        c = synthetic(lumis=((1, 1),), events_per_lumi=0)
        r = run("check_output.py", self.write(c), "--jsonl", self.twin(c))
        self.assertEqual((r.returncode, r.stdout), (0, "check_output: 0 events, 0 jets, 0 fat jets, 8 histograms: ok\n"),
                         r.stderr)

    def test_rows_out_of_order(self):
        c = copy.deepcopy(self.good)
        c["/events"][[3, 4]] = c["/events"][[4, 3]]
        self.check_fails(c, "/events row 4 field event:", "not greater than the previous row's")

    def test_jet_range_gap(self):
        c = copy.deepcopy(self.good)
        ev = c["/events"]
        k = int(np.flatnonzero(ev["n_jets"] > 0)[5])
        stray = c["/jets"][int(ev["first_jet"][k])]
        c["/jets"] = np.insert(c["/jets"], int(ev["first_jet"][k]), stray)  # a row no event owns
        ev["first_jet"][k:] += 1
        self.check_fails(c, f"/events row {k} field first_jet:", "a gap of 1 in /jets")

    def test_jet_range_overlap_and_cover(self):
        c = copy.deepcopy(self.good)
        c["/fat_jets"] = c["/fat_jets"][:-1]
        self.check_fails(c, "field first_fat_jet: the events' ranges cover")

    def test_jet_event_field_mismatch(self):
        c = copy.deepcopy(self.good)
        c["/jets"]["event"][7] += 1
        self.check_fails(c, "/jets row 7 field event:")

    def test_wrong_dtypes(self):
        c = copy.deepcopy(self.good)
        c["/jets"] = c["/jets"].astype([(n, "<f4" if n == "pt" else c["/jets"].dtype[n]) for n in c["/jets"].dtype.names])
        c["/events"] = c["/events"].astype([(n, "<u8" if n == "n_jets" else c["/events"].dtype[n])
                                            for n in c["/events"].dtype.names])
        self.check_fails(c, "/jets field pt: dtype float32, expected f8", "/events field n_jets: dtype uint64, expected u4")

    def test_missing_and_extra_fields(self):
        c = copy.deepcopy(self.good)
        names = [n for n in c["/fat_jets"].dtype.names if n != "groomed_mass"]
        fat = np.zeros(len(c["/fat_jets"]), [(n, c["/fat_jets"].dtype[n]) for n in names] + [("tau21", "<f8")])
        for n in names:
            fat[n] = c["/fat_jets"][n]
        c["/fat_jets"] = fat
        self.check_fails(c, "/fat_jets field groomed_mass: missing", "/fat_jets field tau21: not in the layout")

    def test_lumi_histogram_sum_mismatch(self):
        c = copy.deepcopy(self.good)
        c["histograms"]["jet_pt"]["lumi_counts"][2, 5] += 1
        self.check_fails(c, "/lumi_histograms/jet_pt bin 5: the lumis sum to")

    def test_histogram_shape_range_and_missing(self):
        c = copy.deepcopy(self.good)
        del c["histograms"]["met"]
        c["histograms"]["rho"]["low"] = 50.0
        h = c["histograms"]["n_jets"]
        h["counts"], h["lumi_counts"] = h["counts"][:-1], h["lumi_counts"][:, :-1]
        c["histograms"]["jet_eta"]["counts"] = c["histograms"]["jet_eta"]["counts"].astype(np.int32)
        self.check_fails(c, "/histograms/met: missing", "/histograms/rho attribute low: 50.0 not below high",
                         "/histograms/jet_eta: dtype int32, expected u8")

    def test_jets_not_pt_ordered(self):
        c = copy.deepcopy(self.good)
        k = int(np.flatnonzero(c["/events"]["n_jets"] >= 2)[0])
        j = int(c["/events"]["first_jet"][k])
        c["/jets"][[j, j + 1]] = c["/jets"][[j + 1, j]]
        self.check_fails(c, f"/jets row {j + 1} field pt:", "of the same event")

    def test_kinematics_inconsistent(self):
        c = copy.deepcopy(self.good)
        c["/jets"]["eta"][4] += 1e-6
        c["/fat_jets"]["mass"][2] *= 1.001
        c["/jets"]["phi"][9] -= 2 * math.pi  # the same angle: allowed
        err = self.check_fails(c, "/jets row 4 field eta:", "/fat_jets row 2 field mass:")
        self.assertNotIn("field phi", err)

    def test_event_that_passed_no_path(self):
        c = copy.deepcopy(self.good)
        c["/events"]["dijet"][6] = c["/events"]["boosted"][6] = 0
        self.check_fails(c, "/events row 6 field dijet/boosted:")

    def test_lumis_and_attributes(self):
        c = copy.deepcopy(self.good)
        c[layout.LUMIS][[1, 2]] = c[layout.LUMIS][[2, 1]]
        c["attrs"]["format"] = "heddle-hep-0"
        c["attrs"]["events_selected"] = np.uint64(3)
        del c["attrs"]["events_processed"]
        self.check_fails(c, "/lumis row 2 field lumi:", "/ attribute format:", "/ attribute events_selected: 3, but",
                         "/ attribute events_processed: missing")

    def test_jsonl_value_differs(self):
        ev = self.good["/events"]
        k = int(np.flatnonzero(ev["n_jets"] >= 2)[3])
        twin = copy.deepcopy(self.good)
        j = int(ev["first_jet"][k]) + 1
        twin["/jets"]["px"][j] = np.nextafter(twin["/jets"]["px"][j], np.inf)  # one ulp: not equal
        twin["/events"]["n_pileup"][k + 1] += 1
        self.check_fails(self.good, f"line {k + 1} jets[1] field px:", f"/jets row {j}",
                         f"line {k + 2} field n_pileup:", jsonl=self.twin(twin))

    def test_jsonl_lines_and_fields(self):
        path = self.twin(self.good)
        lines = path.read_text().splitlines()
        lines[0] = lines[0].replace('"met":', '"mett":')
        path.write_text("\n".join(lines[:-1]) + "\n")
        self.check_fails(self.good, "job.jsonl line 1 field met: missing", "job.jsonl line 1 field mett: not in the layout",
                         f"{len(lines) - 1} lines, /events has {len(lines)} rows", jsonl=path)

    def test_problems_are_capped_at_twenty(self):
        c = copy.deepcopy(self.good)
        c["/jets"]["eta"] += 0.5  # every jet
        err = self.check_fails(c, "20 problems (stopped there)")
        self.assertEqual(len([line for line in err.splitlines() if line.startswith("  /jets row")]), 20)

    def test_unreadable_file(self):
        missing = self.dir / "absent.h5"
        r = run("check_output.py", missing)
        self.assertEqual(r.returncode, 2)
        self.assertIn(f"cannot read {missing}", r.stderr)


class CompareOutputsTest(ToolTest):
    def compare(self, a, b, *options):
        r = run("compare_outputs.py", self.write(a, "a.h5"), self.write(b, "b.h5"), *options)
        return r.returncode, r.stdout + r.stderr

    def test_same_content(self):
        rc, out = self.compare(self.good, copy.deepcopy(self.good))
        self.assertEqual(rc, 0, out)
        self.assertIn("same content", out)

    def test_names_the_first_differing_row_and_field(self):
        c = copy.deepcopy(self.good)
        c["/jets"]["py"][11] = np.nextafter(c["/jets"]["py"][11], np.inf)
        c["/jets"]["px"][11] = np.nextafter(c["/jets"]["px"][11], np.inf)
        c["/jets"]["e"][4] += 1.0
        rc, out = self.compare(self.good, c)
        self.assertEqual(rc, 1, out)
        self.assertIn("differ: /jets row 4 field e:", out)
        c["/jets"]["e"][4] -= 1.0
        rc, out = self.compare(self.good, c)
        self.assertIn("differ: /jets row 11 field px:", out)

    def test_bits_not_values(self):
        c = copy.deepcopy(self.good)
        c["/events"]["met_phi"][0] = 0.0
        d = copy.deepcopy(c)
        d["/events"]["met_phi"][0] = -0.0
        rc, out = self.compare(c, d)
        self.assertEqual(rc, 1, out)
        self.assertIn("/events row 0 field met_phi: 0.0 in A, -0.0 in B", out)

    def test_histogram_rows_and_columns(self):
        c = copy.deepcopy(self.good)
        c["histograms"]["rho"]["lumi_counts"][3, 7] += 1
        rc, out = self.compare(self.good, c)
        self.assertEqual(rc, 1, out)
        self.assertIn("/lumi_histograms/rho row 3 column 7:", out)

    def test_attributes_and_ignore_attr(self):
        c = copy.deepcopy(self.good)
        high = float(c["histograms"]["rho"]["high"])
        c["histograms"]["rho"]["high"] = np.float64(high + 50)
        rc, out = self.compare(self.good, c)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"/histograms/rho attribute high: {high} (float64) in A, {high + 50} (float64) in B", out)
        rc, out = self.compare(self.good, c, "--ignore-attr", "high")
        self.assertEqual(rc, 0, out)
        c["histograms"]["jet_pt"]["title"] = "jet pT"
        rc, out = self.compare(self.good, c, "--ignore-attr", "high")
        self.assertEqual(rc, 1, out)
        self.assertIn("/histograms/jet_pt attribute title:", out)
        rc, out = self.compare(self.good, c, "--ignore-attr", "high", "--ignore-attr", "title")
        self.assertEqual(rc, 0, out)
        c["histograms"]["rho"]["high"] = np.float32(high)  # same number, another type
        rc, out = self.compare(self.good, c, "--ignore-attr", "title")
        self.assertIn(f"/histograms/rho attribute high: {high} (float64) in A, {high} (float32) in B", out)

    def test_datasets_dtypes_and_shapes(self):
        c = copy.deepcopy(self.good)
        c["/fat_jets"] = c["/fat_jets"][:-1]
        rc, out = self.compare(self.good, c)
        self.assertEqual(rc, 1, out)
        self.assertIn(f"/fat_jets: shape ({len(self.good['/fat_jets'])},) in A, ({len(c['/fat_jets'])},) in B", out)
        c = copy.deepcopy(self.good)
        del c["histograms"]["met"]
        rc, out = self.compare(c, self.good)
        self.assertIn("/histograms/met: dataset only in B", out)
        a = self.dir / "a.h5"
        write_h5(self.good, a, aligned=True)
        r = run("compare_outputs.py", a, self.dir / "b.h5")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/events: dtype", r.stderr)

    def test_missing_or_unreadable_file(self):
        a = self.write(self.good, "a.h5")
        text = self.dir / "text.h5"
        text.write_text("not HDF5\n")
        absent = self.dir / "absent.h5"
        for args, bad in (((a, absent), absent), ((text, a), text)):
            r = run("compare_outputs.py", *args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"cannot read {bad}", r.stderr)


class PlotHistogramsTest(ToolTest):
    def test_writes_every_png(self):
        out = self.dir / "plots"
        r = run("plot_histograms.py", self.write(self.good), "--out", out, "--log", "jet_pt", "--linear", "rho")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = list(BINNING) + ["lumi_means", "lumi_jet_pt", "summary"]
        expected = {str(out / f"{n}.png") for n in names}
        self.assertEqual(set(r.stdout.split()), expected)
        self.assertEqual({str(p) for p in out.iterdir()}, expected)
        for path in expected:
            with open(path, "rb") as png:
                self.assertEqual(png.read(8), b"\x89PNG\r\n\x1a\n", path)
            self.assertGreater(os.path.getsize(path), 5000, path)

    def test_log_scale_choice(self):
        import plot_histograms

        class Args:
            log, linear, log_range = ["a"], ["b"], 1000.0

        wide, narrow, empty = np.array([1, 5000, 0]), np.array([3, 40, 0]), np.zeros(3)
        self.assertTrue(plot_histograms.wants_log("x", wide, Args))
        self.assertFalse(plot_histograms.wants_log("x", narrow, Args))
        self.assertTrue(plot_histograms.wants_log("a", narrow, Args))
        self.assertFalse(plot_histograms.wants_log("b", wide, Args))
        self.assertFalse(plot_histograms.wants_log("a", empty, Args))

    def test_unreadable_and_empty_files(self):
        r = run("plot_histograms.py", self.dir / "absent.h5", "--out", self.dir / "p")
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot read", r.stderr)
        with h5py.File(self.dir / "empty.h5", "w"):
            pass
        r = run("plot_histograms.py", self.dir / "empty.h5", "--out", self.dir / "p")
        self.assertEqual(r.returncode, 1)
        self.assertIn("has no histograms", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
