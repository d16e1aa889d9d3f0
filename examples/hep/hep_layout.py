# SPDX-License-Identifier: Apache-2.0
"""The HDF5 layout that hep::HDF5Output writes ("heddle-hep-1"), as data for the Python tools.

One place for the contract: check_output.py validates against it, the tests build files from it.
Field lists are in the order the C++ side writes them; the tools match fields by name, so order,
byte order and padding may differ, the kind (u/i/f) and size may not.
"""
import numpy as np

FORMAT = "heddle-hep-1"

# File attributes: name -> "string", "float" or "uint".
FILE_ATTRS = {
    "events_processed": "uint",
    "events_selected": "uint",
    "format": "string",
}

EVENT_FIELDS = [
    ("run", "u4"), ("lumi", "u4"), ("event", "u8"), ("n_pileup", "u4"), ("n_candidates", "u4"),
    ("n_jets", "u4"), ("n_fat_jets", "u4"), ("rho", "f8"), ("met", "f8"), ("met_phi", "f8"),
    ("sum_et", "f8"), ("dijet", "u1"), ("boosted", "u1"), ("first_jet", "u8"), ("first_fat_jet", "u8"),
]
JET_FIELDS = [
    ("event", "u8"), ("px", "f8"), ("py", "f8"), ("pz", "f8"), ("e", "f8"), ("pt", "f8"),
    ("eta", "f8"), ("phi", "f8"), ("area", "f8"), ("raw_pt", "f8"), ("jec", "f8"),
]
FAT_JET_FIELDS = [
    ("event", "u8"), ("px", "f8"), ("py", "f8"), ("pz", "f8"), ("e", "f8"), ("pt", "f8"),
    ("eta", "f8"), ("phi", "f8"), ("mass", "f8"), ("groomed_mass", "f8"),
]
LUMI_FIELDS = [("run", "u4"), ("lumi", "u4"), ("events", "u8")]

# Compound datasets: path -> fields.
TABLES = {"/events": EVENT_FIELDS, "/jets": JET_FIELDS, "/fat_jets": FAT_JET_FIELDS, "/lumis": LUMI_FIELDS}

HISTOGRAMS_GROUP = "/histograms"
LUMI_HISTOGRAMS_GROUP = "/lumi_histograms"
LUMIS = "/lumis"
# The histograms every job writes (a job may write more; each follows the same rules).
HISTOGRAMS = ["jet_pt", "jet_eta", "jet_mass", "fat_jet_groomed_mass", "rho", "met", "n_jets", "n_candidates"]
HISTOGRAM_COUNTS = "u8"
# Histogram attributes: name -> "float" or "string".
HISTOGRAM_ATTRS = {"low": "float", "high": "float", "title": "string", "xlabel": "string"}

# The JSON-lines twin: one object per /events row, the event's fields but the row links, with its
# jets and fat jets as lists of objects (their fields but `event`).
JSON_EVENT_FIELDS = [f for f in EVENT_FIELDS if f[0] not in ("first_jet", "first_fat_jet")]
JSON_JET_FIELDS = [f for f in JET_FIELDS if f[0] != "event"]
JSON_FAT_JET_FIELDS = [f for f in FAT_JET_FIELDS if f[0] != "event"]


def dtype(fields):
    """The packed numpy dtype of a field list (what the tests write)."""
    return np.dtype([(name, "<" + code) for name, code in fields])


def same_kind(actual, expected_code):
    """True when numpy dtype `actual` has the kind and size of `expected_code` ("u4", "f8"...),
    whatever its byte order."""
    expected = np.dtype(expected_code)
    return actual.kind == expected.kind and actual.itemsize == expected.itemsize


def attr_text(value):
    """An HDF5 string attribute as str (h5py gives str for variable-length strings, bytes for
    fixed-length ones); None when the value is not a string."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.bytes_):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return None


def histogram_edges(dataset):
    """(nbins, edges) of a histogram dataset, from its shape and its low/high attributes."""
    nbins = dataset.shape[-1] - 2
    return nbins, np.linspace(float(dataset.attrs["low"]), float(dataset.attrs["high"]), nbins + 1)
