#!/usr/bin/env python3
"""Kernel time of one entry by kernel family, from Nsight Compute's output.

On the GPU machine:
    ncu --clock-control none -k regex:kiln_ --metrics gpu__time_duration.sum \\
        ./kiln-run MODEL.kiln --steps 1 --inputs INPUTS --seed 1 > ncu.txt
    python3 profile_kernels.py ncu.txt
prints, per family (the kernel name without its hash), the launches and their
summed durations in microseconds, largest first (kernels run serialised under
ncu, so the total exceeds a graph replay's time).
"""
import collections
import re
import sys

UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}


def main(path):
    total, count = collections.Counter(), collections.Counter()
    name = None
    with open(path) as f:
        for line in f:
            m = re.match(r"\s+(kiln_\w+?)_[0-9a-f]{12}\s", line)
            if m:
                name = m.group(1)
            m = re.search(r"gpu__time_duration.sum\s+(\w+)\s+([0-9.,]+)", line)
            if m and name:
                total[name] += float(m.group(2).replace(",", "")) * UNITS.get(m.group(1), 1.0)
                count[name] += 1
                name = None
    for family, us in total.most_common():
        print(f"{family:40s} {count[family]:4d} launches {us:9.1f} us")
    print(f"{'all':40s} {sum(count.values()):4d} launches {sum(total.values()):9.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
