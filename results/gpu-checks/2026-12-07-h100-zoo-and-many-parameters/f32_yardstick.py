#!/usr/bin/env python3
"""The H100 gradients of this run (zoo_logs.tar.gz, kiln-run --check lines)
against PyTorch's own f32 gradients, computed on this machine's CPU.

    f32_yardstick.py BUNDLE LOGS MODEL...

BUNDLE: a zoo bundle folder (tests/zoo/make_gpu_bundle.sh, SIZE=ci) in
which `zoo.py gpu-reference BUNDLE MODEL` has run (it writes PyTorch's f64
and f32 gradients); LOGS: zoo_logs.tar.gz unpacked. Per model: kiln's worst
error relative to a gradient's largest magnitude, PyTorch f32's there, and
the gradients whose error is above zoo.py compare-gradients' tolerance."""
import os
import re
import sys

bundle, logs, names = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, bundle)
import zoo  # noqa: E402

CHECK = re.compile(r"check (\S+): .*max abs err (\S+),")
for name in names:
    path = os.path.join(bundle, name)
    expected = {n: g for n, g in zoo.load_safetensors(path + ".expected_gradients.safetensors").items()
                if n.startswith("grad.")}
    theirs = zoo.gradient_errors(expected,
                                 zoo.load_safetensors(path + ".torch_f32_gradients.safetensors"))
    ours = {}
    with open(os.path.join(logs, name + ".gradients.log")) as f:
        for line in f:
            m = CHECK.search(line)
            if m:
                ours[m.group(1)] = float(m.group(2))
    largest = max(m for _, m in theirs.values())
    rows, bad = [], []
    for n, (t, m) in theirs.items():
        e = ours[n]
        rows.append((zoo.relative(e, m, largest), zoo.relative(t, m, largest), n))
        if e > zoo.tolerance(n, m, largest, t):
            bad.append(f"    {n}: kiln {e:.3g}, PyTorch f32 {t:.3g}, largest |f64| {m:.3g}")
    worst = max(rows)
    print(f"{name}: {len(rows)} gradients; kiln's worst {worst[0]:.2e} of its largest "
          f"({worst[2]}; PyTorch f32 {worst[1]:.2e}); {len(bad)} above tolerance")
    print("\n".join(bad))
