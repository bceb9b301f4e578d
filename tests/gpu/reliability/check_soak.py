#!/usr/bin/env python3
"""Checks that a long kiln-run training run stayed flat.

    check_soak.py SOAK.log

Reads kiln-run's progress lines (step, ms/step, device pool in use and its
device allocations, host resident memory). After the first line (warm-up:
graph capture, the first allocations), the pool's bytes in use and its
device allocations must not change, host memory must not grow by more than
16 MiB, and the median step time of the last quarter of the lines must be
within 25% of the first quarter's. Prints the series' ranges; exits 1 if a
check fails."""
import re
import statistics
import sys

LINE = re.compile(
    r"^step (\d+)/(\d+) .* ([0-9.]+) ms/step  pool ([0-9.]+) MiB "
    r"\(peak ([0-9.]+), (\d+) device allocs\)  host ([0-9.]+) MiB")


def main():
    rows = []
    with open(sys.argv[1]) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                rows.append([float(g) for g in m.groups()])
    if len(rows) < 4:
        print(f"only {len(rows)} progress lines")
        sys.exit(1)
    steady = rows[1:]
    step_ms = [r[2] for r in steady]
    pool = [r[3] for r in steady]
    allocs = [r[5] for r in steady]
    host = [r[6] for r in steady]
    quarter = max(1, len(steady) // 4)
    early = statistics.median(step_ms[:quarter])
    late = statistics.median(step_ms[-quarter:])
    print(f"{len(rows)} progress lines, steps {int(rows[0][0])}..{int(rows[-1][0])}")
    print(f"device pool in use: {min(pool):.1f}..{max(pool):.1f} MiB, "
          f"peak {rows[-1][4]:.1f} MiB, device allocations {int(min(allocs))}..{int(max(allocs))}")
    print(f"host resident: {min(host):.1f}..{max(host):.1f} MiB "
          f"(first line {rows[0][6]:.1f} MiB)")
    print(f"step time: median {early:.4f} ms over the first quarter, "
          f"{late:.4f} ms over the last ({100 * (late / early - 1):+.1f}%), "
          f"range {min(step_ms):.4f}..{max(step_ms):.4f} ms")
    checks = {
        "pool in use constant": max(pool) == min(pool),
        "no device allocations after warm-up": max(allocs) == min(allocs),
        "host memory growth <= 16 MiB": max(host) - min(host) <= 16,
        "step time drift within 25%": abs(late / early - 1) <= 0.25,
    }
    for name, ok in checks.items():
        print(f"{'ok' if ok else 'FAILED'}: {name}")
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
