"""Random bf16 inputs of a sweep model's three entries (x, w, g uniform in
[-1, 1)): NAME.forward, NAME.di and NAME.dw .safetensors.
    inputs.py NAME N C H W O KERNEL STRIDE PADDING"""
import sys

import torch

from bench_harness import write_safetensors

name, n, c, h, w, o, k, s, p = sys.argv[1], *map(int, sys.argv[2:10])
oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1


def tensor(shape):
    x = (torch.rand(shape) * 2 - 1).to(torch.bfloat16)
    return ("BF16", list(shape), x.view(torch.int16).numpy().tobytes())


X, W, G = tensor((n, h, w, c)), tensor((o, k, k, c)), tensor((n, oh, ow, o))
write_safetensors(name + ".forward.safetensors", {"x": X, "w": W})
write_safetensors(name + ".di.safetensors", {"g": G, "w": W})
write_safetensors(name + ".dw.safetensors", {"g": G, "x": X})
