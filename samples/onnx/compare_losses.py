#!/usr/bin/env python3
"""Compares kiln-run's per-step losses with PyTorch's.

    compare_losses.py TORCH_LOSSES.txt KILN_RUN.log [--rtol 1e-3]

TORCH_LOSSES.txt has one loss per line (export_mlp.py); KILN_RUN.log is the
output of kiln-run --log-every 1 ("step N/M  loss X ..." lines). Every step
must be there and agree within rtol (relative); prints the largest
difference and PASS or FAIL, exits 1 on FAIL.
"""
import argparse
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("torch_losses")
    parser.add_argument("kiln_log")
    parser.add_argument("--rtol", type=float, default=1e-3)
    args = parser.parse_args()
    with open(args.torch_losses) as f:
        torch_losses = [float(line) for line in f if line.strip()]
    kiln = {}
    with open(args.kiln_log) as f:
        for line in f:
            m = re.search(r"step (\d+)/\d+\s+loss (\S+)", line)
            if m:
                kiln[int(m.group(1))] = float(m.group(2))
    worst, failed = 0.0, []
    for step, expected in enumerate(torch_losses, start=1):
        if step not in kiln:
            failed.append(f"step {step}: no kiln loss")
            continue
        rel = abs(kiln[step] - expected) / max(abs(expected), 1e-12)
        worst = max(worst, rel)
        if rel > args.rtol:
            failed.append(f"step {step}: kiln {kiln[step]:.6g}, torch {expected:.6g}")
    print(f"compare_losses: {len(torch_losses)} steps, largest relative "
          f"difference {worst:.3g} (bound {args.rtol:g})")
    for problem in failed[:10]:
        print("  " + problem)
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
