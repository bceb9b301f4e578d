#!/usr/bin/env python3
"""The SDK consumers' fixed batch, for kiln-run, and the loss comparison.

    mlp_batch.py write OUT.safetensors
        x (64x8) and y (64x1) of samples/mlp.mlir, element e of each filled
        as sdk/examples/c/train.c fills it: float((e * MUL) % MOD) / MOD -
        SHIFT in f32 (x: 37, 17, 0.5; y: 11, 7, 0).
    mlp_batch.py compare KILN_RUN.log CONSUMER.log
        every step of kiln-run --log-every 1 ("step N/M  loss X", %.6g) must
        be in the consumer's log ("step N loss X", %.6f) with the same value
        to the digits both print; exits 1 otherwise.
"""
import json
import re
import struct
import sys

BATCH = {"x": ((64, 8), 37, 17, 0.5), "y": ((64, 1), 11, 7, 0.0)}


def f32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def pattern(count, mul, mod, shift):
    # One f32 division and one f32 subtraction, each exact in f64 before its
    # rounding to f32, so rounding the f64 result gives C's float result.
    return [f32(f32((e * mul) % mod / mod) - shift) for e in range(count)]


def write(path):
    header, blobs, offset = {}, [], 0
    for name, (shape, mul, mod, shift) in BATCH.items():
        count = shape[0] * shape[1]
        blob = struct.pack(f"<{count}f", *pattern(count, mul, mod, shift))
        header[name] = {"dtype": "F32", "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def losses(path, regex):
    with open(path) as f:
        return {int(m.group(1)): float(m.group(2))
                for m in (re.search(regex, line) for line in f) if m}


def compare(kiln_run_log, consumer_log):
    expected = losses(kiln_run_log, r"step (\d+)/\d+\s+loss (\S+)")
    got = losses(consumer_log, r"^step (\d+) loss (\S+)")
    if not expected:
        sys.exit(f"no losses in {kiln_run_log}")
    bad, worst = [], 0.0
    for step, loss in sorted(expected.items()):
        if step not in got:
            bad.append(f"step {step} missing")
            continue
        # %.6g and %.6f each round to within half their last digit.
        bound = 5e-7 + 5e-6 * abs(loss)
        worst = max(worst, abs(got[step] - loss))
        if abs(got[step] - loss) > bound:
            bad.append(f"step {step}: {got[step]:.6f}, kiln-run {loss:.6g}")
    first, last = min(expected), max(expected)
    print(f"{len(expected)} steps, loss {expected[first]:.6g} -> "
          f"{expected[last]:.6g}, largest difference from kiln-run "
          f"{worst:.2g}" + ("; " + "; ".join(bad[:3]) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
