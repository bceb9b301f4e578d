#!/usr/bin/env python3
"""How close to zero the ReLU inputs of a zoo model come, in f64, at the
bundle's weights and batch: the smallest |x| of each ReLU call relative to
that tensor's RMS, and how many elements lie within 1e-5 and 1e-4 of it.
An input within f32's rounding of zero makes the ReLU's side, and so every
gradient upstream of it, a matter of summation order.

    relu_margins.py BUNDLE MODEL   (BUNDLE: a zoo GPU bundle's folder, with
                                    MODEL.json, .buffers and .batch files)
"""
import copy
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/zoo"))
import models  # noqa: E402
import zoo  # noqa: E402


def main():
    bundle, name = sys.argv[1:3]
    path = os.path.join(bundle, name)
    info = json.load(open(path + ".json"))
    torch.manual_seed(0)
    case = models.ZOO[name](info["size"])
    train = models.WithLoss(case.model, case.loss).train()
    buffers = zoo.load_safetensors(path + ".buffers.safetensors")
    train.load_state_dict({n: torch.from_numpy(a.copy()) for n, a in buffers.items()},
                          strict=False)
    batch = zoo.load_safetensors(path + ".batch.safetensors")
    args = [torch.from_numpy(batch[n].copy()) for n in info["inputs"]]
    model = zoo.as_exported(copy.deepcopy(train)).double()
    rows = []

    def record(label, x):
        rms = x.pow(2).mean().sqrt().item()
        a = x.abs().flatten()
        rows.append((a.min().item() / rms, label, int((a < 1e-5 * rms).sum()),
                     int((a < 1e-4 * rms).sum()), a.numel()))

    for label, module in model.named_modules():
        if isinstance(module, torch.nn.ReLU):
            module.inplace = False
            module.register_forward_hook(
                lambda m, inputs, out, label=label: record(label, inputs[0].detach()))
    model(*(a.double() if a.is_floating_point() else a for a in args))
    for margin, label, below5, below4, count in sorted(rows)[:8]:
        print(f"{label}: smallest |x| {margin:.2e} of its RMS; within 1e-5: {below5}, "
              f"within 1e-4: {below4} of {count}")


if __name__ == "__main__":
    main()
