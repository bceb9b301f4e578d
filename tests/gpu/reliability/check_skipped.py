#!/usr/bin/env python3
"""Checks that updates on non-finite gradients were skipped and counted.

    check_skipped.py BEFORE.safetensors AFTER.safetensors N

AFTER is BEFORE trained N more steps on a batch with NaN and infinite
inputs: every parameter and optimizer-state tensor must be bit-identical,
grad_stats.skipped_updates must have grown by N, and the step by N."""
import math
import sys

import safetensors_lite as st


def main():
    before, before_meta = st.load(sys.argv[1])
    after, after_meta = st.load(sys.argv[2])
    n = int(sys.argv[3])
    ok = True
    counter = "grad_stats.skipped_updates"
    for name in sorted(before):
        if name == counter:
            continue
        same = len(before[name][2]) == len(after[name][2]) and all(
            a == b or (math.isnan(a) and math.isnan(b))
            for a, b in zip(before[name][2], after[name][2]))
        print(f"{name}: {'unchanged' if same else 'CHANGED'}")
        ok = ok and same
    skipped = after[counter][2][0] - before[counter][2][0]
    steps = int(after_meta.get("step", -1)) - int(before_meta.get("step", -1))
    print(f"{counter}: {before[counter][2][0]:g} -> {after[counter][2][0]:g}; "
          f"step {before_meta.get('step')} -> {after_meta.get('step')}")
    ok = ok and skipped == n and steps == n
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
