#!/usr/bin/env python3
"""Compares the tensors two safetensors checkpoints share (f32, bf16, f16).

  compare_checkpoints.py A B [--rtol R] [--names w,b] [--ignore adam_]
                         [--exact]

For each tensor: the largest |a - b| relative to the largest |b| of the
tensor. Exit status 0 when every such ratio is <= R (with --exact: every
element bit for bit equal), 1 otherwise, 2 for unreadable files. Plain
Python (no numpy), so it runs wherever python3 does.
"""
import argparse
import json
import struct
import sys

SIZES = {"F32": 4, "BF16": 2, "F16": 2, "I32": 4}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in SIZES:
            continue
        a, b = info["data_offsets"]
        raw = data[8 + n + a:8 + n + b]
        dtype = info["dtype"]
        if dtype == "F32":
            values = struct.unpack("<%df" % (len(raw) // 4), raw)
        elif dtype == "I32":
            values = struct.unpack("<%di" % (len(raw) // 4), raw)
        elif dtype == "F16":
            values = struct.unpack("<%de" % (len(raw) // 2), raw)
        else:  # BF16: the high half of an f32
            halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
            values = struct.unpack("<%df" % len(halves),
                                   struct.pack("<%dI" % len(halves),
                                               *[h << 16 for h in halves]))
        out[name] = (dtype, raw, values)
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--names", default="")
    p.add_argument("--ignore", default="",
                   help="comma-separated name prefixes left out")
    p.add_argument("--exact", action="store_true")
    args = p.parse_args()
    try:
        a, b = load(args.a), load(args.b)
    except (OSError, ValueError, KeyError) as e:
        print("compare_checkpoints: %s" % e)
        return 2
    ignored = tuple(x for x in args.ignore.split(",") if x)
    names = [n for n in args.names.split(",") if n] or sorted(set(a) & set(b))
    names = [n for n in names if not (ignored and n.startswith(ignored))]
    if not names:
        print("compare_checkpoints: no tensors in common")
        return 1
    worst, ok = 0.0, True
    for name in names:
        if name not in a or name not in b:
            print("%s: missing" % name)
            ok = False
            continue
        (da, ra, va), (db, rb, vb) = a[name], b[name]
        if len(va) != len(vb):
            print("%s: %d vs %d elements" % (name, len(va), len(vb)))
            ok = False
            continue
        if args.exact:
            same = da == db and ra == rb
            print("%s: %s" % (name, "identical" if same else "DIFFERENT"))
            ok &= same
            continue
        scale = max((abs(y) for y in vb), default=0.0) or 1.0
        diff = max((abs(x - y) for x, y in zip(va, vb)), default=0.0)
        ratio = diff / scale
        worst = max(worst, ratio)
        print("%s: max |a - b| = %.3g, %.3g of max |b|" % (name, diff, ratio))
        ok &= ratio <= args.rtol
    if not args.exact:
        print("worst relative difference %.3g (bound %.3g)" % (worst, args.rtol))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
