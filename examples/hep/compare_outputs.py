#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compare two HDF5 files' content: the same groups and datasets, the same dtypes and shapes, the
same values bit for bit (NaN == NaN, 0.0 != -0.0), the same attributes on every object.

usage: compare_outputs.py A.h5 B.h5 [--ignore-attr NAME]...

--ignore-attr NAME: attribute NAME may differ, or be absent from one file, on any object
(repeatable; none by default). How the data is stored (chunks, compression) is not content.

Exit 0 when the content is the same; 1 with a message naming the first object, row and field (or
attribute) that differs, objects in path order; 2 when a file is missing or not readable HDF5.
"""
import argparse
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    sys.exit(f"compare_outputs.py: {sys.executable} cannot import {e.name} (apt-get install python3-h5py)")

ROWS_PER_READ = 1 << 20  # datasets are compared in slices of this many rows


class Difference(Exception):
    pass


def objects(f):
    """Every group and dataset of an open file, by path."""
    found = {"/": f}
    f.visititems(lambda name, obj: found.__setitem__("/" + name, obj))
    return found


def show(value):
    value = value.item() if isinstance(value, np.generic) else value
    return repr(value)


def same_bits(a, b):
    """True when two attribute values have the same type, shape and bits."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "O":
        return all(x == y for x, y in zip(a.ravel(), b.ravel()))
    return a.tobytes() == b.tobytes()


def differing(a, b):
    """Boolean mask of the elements (of one field) whose bits differ."""
    if a.dtype.kind == "O":  # variable-length strings
        return np.frompyfunc(lambda x, y: not np.array_equal(x, y), 2, 1)(a, b).astype(bool)
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype.itemsize == 0:
        return np.zeros(a.shape, bool)
    size = a.dtype.itemsize
    return (a.view(np.uint8).reshape(a.shape + (size,)) != b.view(np.uint8).reshape(b.shape + (size,))).any(axis=-1)


def where(index):
    if not index:
        return "the value"
    return f"row {index[0]}" + (f" column {', '.join(map(str, index[1:]))}" if len(index) > 1 else "")


def compare_attrs(path, a, b, ignored):
    names_a, names_b = set(a.attrs) - ignored, set(b.attrs) - ignored
    for name in sorted(names_a ^ names_b):
        raise Difference(f"{path} attribute {name}: only in {'A' if name in names_a else 'B'}")
    for name in sorted(names_a):
        va, vb = a.attrs[name], b.attrs[name]
        ta, tb = a.attrs.get_id(name).dtype, b.attrs.get_id(name).dtype
        if ta != tb or not same_bits(va, vb):
            raise Difference(f"{path} attribute {name}: {show(va)} ({ta}) in A, {show(vb)} ({tb}) in B")


def compare_dataset(path, a, b):
    if a.dtype != b.dtype:
        raise Difference(f"{path}: dtype {a.dtype} in A, {b.dtype} in B")
    if a.shape != b.shape:
        raise Difference(f"{path}: shape {a.shape} in A, {b.shape} in B")
    if a.shape == ():
        slices = [()]
    else:
        slices = [slice(start, start + ROWS_PER_READ) for start in range(0, a.shape[0], ROWS_PER_READ)]
    fields = a.dtype.names or [None]
    for s in slices:
        xa, xb = np.asarray(a[s]), np.asarray(b[s])
        offset = s.start if isinstance(s, slice) else 0
        first = None  # (flat index, field) of the first difference in this slice
        for field in fields:
            fa, fb = (xa, xb) if field is None else (xa[field], xb[field])
            mask = np.atleast_1d(differing(np.asarray(fa), np.asarray(fb)))
            if field is not None and mask.ndim > xa.ndim:  # a field that is itself an array
                mask = mask.reshape(xa.shape + (-1,)).any(axis=-1)
            if mask.any():
                flat = int(np.argmax(mask.ravel()))
                if first is None or flat < first[0]:
                    first = (flat, field)
        if first is not None:
            flat, field = first
            index = np.unravel_index(flat, xa.shape) if xa.shape else ()
            va, vb = (xa[index], xb[index]) if field is None else (xa[index][field], xb[index][field])
            index = tuple(int(i) for i in index)
            if index:
                index = (index[0] + offset,) + index[1:]
            name = f" field {field}" if field is not None else ""
            raise Difference(f"{path} {where(index)}{name}: {show(va)} in A, {show(vb)} in B"
                             + (" (same printed value, different bits)" if show(va) == show(vb) else ""))


def compare(fa, fb, ignored):
    oa, ob = objects(fa), objects(fb)
    for path in sorted(set(oa) | set(ob)):
        if path not in oa or path not in ob:
            kind = "group" if isinstance(oa[path] if path in oa else ob[path], h5py.Group) else "dataset"
            raise Difference(f"{path}: {kind} only in {'A' if path in oa else 'B'}")
        a, b = oa[path], ob[path]
        if isinstance(a, h5py.Dataset) != isinstance(b, h5py.Dataset):
            raise Difference(f"{path}: a {'dataset' if isinstance(a, h5py.Dataset) else 'group'} in A, not in B")
        compare_attrs(path, a, b, ignored)
        if isinstance(a, h5py.Dataset):
            compare_dataset(path, a, b)
    return len(oa)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a", metavar="A.h5")
    parser.add_argument("b", metavar="B.h5")
    parser.add_argument("--ignore-attr", action="append", default=[], metavar="NAME",
                        help="an attribute that may differ (repeatable)")
    args = parser.parse_args()
    files = []
    try:
        for name in (args.a, args.b):
            try:
                files.append(h5py.File(name, "r"))
            except OSError as e:
                print(f"compare_outputs: cannot read {name}: {e}", file=sys.stderr)
                return 2
        n = compare(files[0], files[1], set(args.ignore_attr))
    except Difference as d:
        print(f"compare_outputs: {args.a} (A) and {args.b} (B) differ: {d}", file=sys.stderr)
        return 1
    finally:
        for f in files:
            f.close()
    print(f"compare_outputs: {args.a} and {args.b}: same content ({n} objects)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
