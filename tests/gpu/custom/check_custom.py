#!/usr/bin/env python3
"""Checks a user's backward kernel against central differences of its forward.

    check_custom.py KILN_RUN GRAD_CHECK.kiln WORKDIR SEED

GRAD_CHECK.kiln (grad_check.mlir, compiled with kilnc --inference) has one
entry, `forward`, that takes x [R, C], s [C] and dy [R, C] and returns the
user's forward y = op(x, s) and the user's backward dx, ds for the output
gradient dy. With L(x, s) = sum(dy * op(x, s)) (accumulated in f64 on the
host from the f32 outputs), the backward must give L's gradient:

  - along random directions v: (L(p + h v) - L(p - h v)) / 2h against
    <(dx, ds), v>;
  - for single elements of x and of s: the difference quotient of L in that
    element against dx or ds there.

x is drawn away from the kink of the activation (|x| >= 0.05) and steps
stay below it, so every difference quotient sees one smooth piece. Only
standard-library Python (safetensors_lite.py beside this file). Prints one
line per check and exits non-zero on any failure; every kiln-run's output
is appended to WORKDIR/kiln-run.log.
"""
import math
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_lite as st  # noqa: E402

ROWS, COLS = 64, 32
STEP = 1e-2
DIRECTIONS = 8
ELEMENTS_X, ELEMENTS_S = 12, 6


def run_forward(kiln_run, artifact, work, x, s, dy, tag):
    inputs = os.path.join(work, f"{tag}.inputs.safetensors")
    outputs = os.path.join(work, f"{tag}.outputs.safetensors")
    st.save(inputs, {"x": ("F32", [ROWS, COLS], x), "s": ("F32", [COLS], s),
                     "dy": ("F32", [ROWS, COLS], dy)})
    result = subprocess.run([kiln_run, artifact, "--entry", "forward", "--inputs",
                             inputs, "--output", outputs],
                            capture_output=True, text=True)
    # Every run's output is kept (under compute-sanitizer it ends with the
    # tool's summary, which tests/gpu/run_sanitizers.sh counts).
    with open(os.path.join(work, "kiln-run.log"), "a") as log:
        log.write(f"== {tag}\n{result.stdout}{result.stderr}")
    if result.returncode != 0:
        raise RuntimeError(f"kiln-run failed ({tag}): {result.stdout}{result.stderr}")
    tensors, _ = st.load(outputs)
    return {name: values for name, (_, _, values) in tensors.items()}


def to_f32(values):
    return [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]


def objective(dy, y):
    return math.fsum(a * b for a, b in zip(dy, y))


def main():
    kiln_run, artifact, work, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    os.makedirs(work, exist_ok=True)
    rng = random.Random(seed)

    def away_from_kink():
        while True:
            v = rng.gauss(0.0, 1.0)
            if abs(v) >= 0.05:
                return v

    x = [away_from_kink() for _ in range(ROWS * COLS)]
    s = [rng.uniform(0.5, 1.5) * rng.choice((-1.0, 1.0)) for _ in range(COLS)]
    dy = [rng.gauss(0.0, 1.0) for _ in range(ROWS * COLS)]
    # Round the draws to f32, as the kernels see them.
    x, s, dy = to_f32(x), to_f32(s), to_f32(dy)

    base = run_forward(kiln_run, artifact, work, x, s, dy, "base")
    dx, ds = base["dx"], base["ds"]
    failures = 0
    # Each direction's size (clipped so that |h v| < 0.05 <= |x|).
    def direction():
        return [max(-3.0, min(3.0, rng.gauss(0.0, 1.0))) for _ in range(ROWS * COLS)], \
               [max(-3.0, min(3.0, rng.gauss(0.0, 1.0))) for _ in range(COLS)]

    def check(name, plus, minus, analytic, scale):
        nonlocal failures
        fd = (objective(dy, plus["y"]) - objective(dy, minus["y"])) / (2 * STEP)
        tolerance = 2e-3 * max(abs(analytic), scale) + 1e-3
        ok = math.isfinite(fd) and abs(fd - analytic) <= tolerance
        failures += not ok
        print(f"{'PASS' if ok else 'FAIL'} {name}: backward {analytic:.6g}, "
              f"central difference {fd:.6g} (|diff| {abs(fd - analytic):.3g}, "
              f"tolerance {tolerance:.3g})")

    for k in range(DIRECTIONS):
        vx, vs = direction()
        analytic = math.fsum(a * b for a, b in zip(dx, vx)) + math.fsum(
            a * b for a, b in zip(ds, vs))
        scale = math.sqrt(math.fsum(a * a for a in dx) + math.fsum(a * a for a in ds))
        plus = run_forward(kiln_run, artifact, work,
                           [a + STEP * b for a, b in zip(x, vx)],
                           [a + STEP * b for a, b in zip(s, vs)], dy, f"dir{k}p")
        minus = run_forward(kiln_run, artifact, work,
                            [a - STEP * b for a, b in zip(x, vx)],
                            [a - STEP * b for a, b in zip(s, vs)], dy, f"dir{k}m")
        check(f"direction {k}", plus, minus, analytic, scale)

    for k in rng.sample(range(ROWS * COLS), ELEMENTS_X):
        xp, xm = list(x), list(x)
        xp[k] += STEP
        xm[k] -= STEP
        check(f"dx[{k // COLS}, {k % COLS}]",
              run_forward(kiln_run, artifact, work, xp, s, dy, f"x{k}p"),
              run_forward(kiln_run, artifact, work, xm, s, dy, f"x{k}m"), dx[k], 0.0)
    for c in rng.sample(range(COLS), ELEMENTS_S):
        sp, sm = list(s), list(s)
        sp[c] += STEP
        sm[c] -= STEP
        check(f"ds[{c}]",
              run_forward(kiln_run, artifact, work, x, sp, dy, f"s{c}p"),
              run_forward(kiln_run, artifact, work, x, sm, dy, f"s{c}m"), ds[c], 0.0)

    # A backward that wrote nothing (zeros) must not pass by accident.
    if all(v == 0.0 for v in dx) or all(v == 0.0 for v in ds):
        print("FAIL the backward's gradients are all zeros")
        failures += 1
    print(f"custom gradient check: {failures} failed (seed {seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
