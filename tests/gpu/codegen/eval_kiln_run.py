#!/usr/bin/env python3
"""Held-out evaluation of a model trained by kiln-run (on the GPU machine).

    eval_kiln_run.py ARTIFACT CHECKPOINT TASK WORKDIR

Draws 64 fresh sequences (sine) or samples (regression) of the sample task
(samples/data/sine_task.h), runs the artifact's forward entry on them with the
checkpoint's parameters through kiln-run, and prints the mean loss (the
held-out MSE). Needs numpy and the safetensors package.
"""
import math
import subprocess
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

U = np.array([0.9, -0.4, 0.3, 0.7, -0.8, 0.2, -0.5, 0.6])
V = np.array([-0.3, 0.8, 0.5, -0.6, 0.4, -0.9, 0.7, 0.1])


def batch(rng, task, size):
    if task == "sine":
        t = np.arange(32) / 32.0
        a = rng.uniform(0.5, 1.5, (size, 2))
        p = rng.uniform(0, 2 * math.pi, (size, 2))
        clean = (a[:, :1] * np.sin(2 * math.pi * 3 * t + p[:, :1]) +
                 a[:, 1:] * np.sin(2 * math.pi * 7 * t + p[:, 1:]))
        noisy = clean + rng.uniform(-0.5, 0.5, clean.shape)
        return noisy[..., None].astype(np.float32), clean[..., None].astype(np.float32)
    x = rng.uniform(-1, 1, (size, 8))
    y = np.sin(2 * x @ U) + 0.5 * np.cos(x @ V)
    return x.astype(np.float32), y[:, None].astype(np.float32)


def main():
    artifact, checkpoint, task, work = sys.argv[1:5]
    size = 4 if task == "sine" else 64
    rng = np.random.default_rng(12345)
    losses = []
    for i in range(64 // size):
        x, y = batch(rng, task, size)
        inputs, output = f"{work}/heldout{i}.safetensors", f"{work}/out{i}.safetensors"
        save_file({"x": x, "y": y}, inputs)
        subprocess.run(["./kiln-run", artifact, "--entry", "forward", "--params", checkpoint,
                        "--inputs", inputs, "--output", output], check=True,
                       stdout=subprocess.DEVNULL)
        losses.append(float(load_file(output)["loss"]))
    print(f"held-out MSE over 64 samples: {sum(losses) / len(losses):.5f}")


if __name__ == "__main__":
    main()
