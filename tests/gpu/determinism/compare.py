#!/usr/bin/env python3
"""Compares safetensors files tensor by tensor, bit for bit, with the first.

    compare.py LABEL FIRST OTHER...

Prints one line per file that differs, naming each tensor whose bytes differ
with the number of differing elements and the largest absolute difference
(f32, bf16, f16), and a last line with the verdict for LABEL. Exit status 0
when every file holds the same tensors (names, dtypes, shapes and bytes) as
FIRST, 1 otherwise, 2 for a bad command line or an unreadable file.
"""

import json
import math
import struct
import sys

ELEMENT_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "I32": 4, "I64": 8, "BOOL": 1}


def read(path):
    """{name: (dtype, shape, bytes)} of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + length])
    body = memoryview(data)[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], tuple(info["shape"]), body[begin:end])
    return tensors


def values(dtype, raw):
    """The elements as Python floats (ints for integer types)."""
    if dtype == "F32":
        return struct.unpack("<%df" % (len(raw) // 4), raw)
    if dtype == "BF16":
        halves = struct.unpack("<%dH" % (len(raw) // 2), raw)
        return struct.unpack("<%df" % len(halves),
                             struct.pack("<%dI" % len(halves),
                                         *[h << 16 for h in halves]))
    if dtype == "F16":
        return struct.unpack("<%de" % (len(raw) // 2), raw)
    if dtype == "I32":
        return struct.unpack("<%di" % (len(raw) // 4), raw)
    if dtype == "I64":
        return struct.unpack("<%dq" % (len(raw) // 8), raw)
    return tuple(raw)


def difference(dtype, a, b):
    """(differing elements, elements, largest |a - b| over finite pairs)."""
    size = ELEMENT_BYTES[dtype]
    count = len(a) // size
    try:
        import numpy  # the GPU machine's python has it; faster on big tensors
        kinds = {"F32": "<f4", "F16": "<f2", "I32": "<i4", "I64": "<i8",
                 "BOOL": "u1"}
        if dtype == "BF16":
            x = (numpy.frombuffer(a, "<u2").astype("<u4") << 16).view("<f4")
            y = (numpy.frombuffer(b, "<u2").astype("<u4") << 16).view("<f4")
        else:
            x = numpy.frombuffer(a, kinds[dtype])
            y = numpy.frombuffer(b, kinds[dtype])
        bits_a = numpy.frombuffer(a, "u1").reshape(count, size)
        bits_b = numpy.frombuffer(b, "u1").reshape(count, size)
        differing = int((bits_a != bits_b).any(axis=1).sum())
        finite = numpy.isfinite(x) & numpy.isfinite(y)
        gap = numpy.abs(x[finite].astype("f8") - y[finite].astype("f8"))
        return differing, count, float(gap.max()) if gap.size else 0.0
    except ImportError:
        pass
    x, y = values(dtype, a), values(dtype, b)
    differing, largest = 0, 0.0
    for i in range(count):
        if bytes(a[i * size:(i + 1) * size]) != bytes(b[i * size:(i + 1) * size]):
            differing += 1
            if all(math.isfinite(v) for v in (x[i], y[i])):
                largest = max(largest, abs(x[i] - y[i]))
    return differing, count, largest


def compare(first, other):
    """Lines describing how `other` differs from `first` (empty: identical)."""
    lines = []
    for name in sorted(set(first) | set(other)):
        if name not in other:
            lines.append("%s missing" % name)
            continue
        if name not in first:
            lines.append("%s extra" % name)
            continue
        (dt_a, shape_a, a), (dt_b, shape_b, b) = first[name], other[name]
        if (dt_a, shape_a) != (dt_b, shape_b):
            lines.append("%s is %s%s, not %s%s" %
                         (name, dt_b, list(shape_b), dt_a, list(shape_a)))
        elif a != b:
            differing, count, largest = difference(dt_a, a, b)
            lines.append("%s: %d of %d elements differ, max |diff| %.3g" %
                         (name, differing, count, largest))
    return lines


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    label, paths = argv[1], argv[2:]
    try:
        files = [read(path) for path in paths]
    except (OSError, ValueError, KeyError, struct.error) as e:
        print("%s: cannot read: %s" % (label, e), file=sys.stderr)
        return 2
    differing = 0
    for path, tensors in zip(paths[1:], files[1:]):
        lines = compare(files[0], tensors)
        if lines:
            differing += 1
            print("%s: %s differs from %s in %d of %d tensors:" %
                  (label, path, paths[0], len(lines), len(files[0])))
            for line in lines:
                print("  " + line)
    if differing:
        print("FAIL %s: %d of %d files differ from %s" %
              (label, differing, len(paths) - 1, paths[0]))
        return 1
    print("PASS %s: %d files bit-identical (%d tensors)" %
          (label, len(paths), len(files[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
