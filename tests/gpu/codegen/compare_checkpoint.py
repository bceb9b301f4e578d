#!/usr/bin/env python3
"""Compares a checkpoint written by kiln-run after one update with kiln-ref's
f64 outputs of train_step on the same state.

    compare_checkpoint.py EXPECTED.safetensors ACTUAL.safetensors RTOL ATOL

Every tensor of ACTUAL (parameters, master weights, optimizer state) must be
in EXPECTED and match elementwise: |a - e| <= ATOL + RTOL * |e|; NaN never
passes. Prints one line per tensor; exits 1 on any mismatch."""
import math
import sys

import safetensors_lite as st


def main():
    expected, _ = st.load(sys.argv[1])
    actual, metadata = st.load(sys.argv[2])
    rtol, atol = float(sys.argv[3]), float(sys.argv[4])
    ok = True
    print(f"checkpoint step {metadata.get('step')}")
    for name in sorted(actual):
        if name not in expected:
            print(f"{name}: MISSING from the reference")
            ok = False
            continue
        a, e = actual[name][2], expected[name][2]
        if len(a) != len(e):
            print(f"{name}: {len(a)} elements, reference has {len(e)}")
            ok = False
            continue
        bad, worst_abs, worst_rel = 0, 0.0, 0.0
        for x, y in zip(a, e):
            diff = abs(x - y)
            if math.isnan(x) or math.isnan(y) or diff > atol + rtol * abs(y):
                bad += 1
            if not math.isnan(diff):
                worst_abs = max(worst_abs, diff)
                worst_rel = max(worst_rel, diff / max(abs(y), 1e-30))
        status = "ok" if bad == 0 else f"MISMATCH {bad}"
        print(f"{name}: {status} ({len(a)} elements, {actual[name][0]}, "
              f"max abs err {worst_abs:.3g}, max rel err {worst_rel:.3g})")
        ok = ok and bad == 0
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
