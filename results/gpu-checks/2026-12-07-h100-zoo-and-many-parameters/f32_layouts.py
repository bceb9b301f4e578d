#!/usr/bin/env python3
"""How far two f32 computations of PyTorch itself (default layout and
channels-last, on this machine's CPU) land from f64 and from each other.

    f32_layouts.py BUNDLE MODEL GRADIENT...      (BUNDLE as f32_yardstick.py's)"""
import copy
import json
import os
import sys

import numpy as np
import torch

bundle, name, gradients = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, bundle)
import models  # noqa: E402
import zoo  # noqa: E402

path = os.path.join(bundle, name)
with open(path + ".json") as f:
    info = json.load(f)
torch.manual_seed(0)
case = models.ZOO[name](info["size"])
train = models.WithLoss(case.model, case.loss).train()
buffers = zoo.load_safetensors(path + ".buffers.safetensors")
train.load_state_dict({n: torch.from_numpy(a.copy()) for n, a in buffers.items()}, strict=False)
batch = zoo.load_safetensors(path + ".batch.safetensors")
args = [torch.from_numpy(batch[n].copy()) for n in info["inputs"]]
expected = zoo.load_safetensors(path + ".expected_gradients.safetensors")
f32 = zoo.torch_f32_gradients(train, args, "cpu")
largest = max(float(np.abs(g).max()) for g in expected.values())
for n in gradients:
    scale = max(float(np.abs(expected[n]).max()), 1e-6 * largest)
    default, last = f32[n], f32["channels_last:" + n]
    print(f"{n}: default layout {np.abs(default - expected[n]).max() / scale:.3e}, "
          f"channels-last {np.abs(last - expected[n]).max() / scale:.3e}, "
          f"between the two {np.abs(default - last).max() / scale:.3e} of its largest")
