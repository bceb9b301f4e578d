#!/usr/bin/env python3
"""Which PyTorch parameter each initializer of a default export's training
graph was folded from, and how: the same tensor, a transpose, a slice, a
broadcast copy (which training treats as independent copies), or none
found (a mix, as batch norm folded into a convolution).

    folded_initializers.py DIR MODEL   (DIR: a folder of `zoo.py export`)
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tests/zoo"))
import zoo  # noqa: E402


def relation(value, param):
    if value.shape == param.shape and np.array_equal(value, param):
        return "the same"
    if value.ndim == 2 and value.shape == param.shape[::-1] and np.array_equal(value, param.T):
        return "transposed"
    if value.size < param.size and np.isin(value.ravel(), param.ravel()).all():
        return "a slice or reordering"
    if value.size > param.size and value.size % param.size == 0:
        try:
            if np.array_equal(value, np.broadcast_to(param.reshape(
                    [1] * (value.ndim - param.ndim) + list(param.shape)), value.shape)):
                return f"a broadcast copy ({value.size // param.size} copies)"
        except ValueError:
            pass
        if np.isin(param.ravel(), value.ravel()).all() and value.size > param.size:
            return f"copies ({value.size // param.size}x the elements)"
    if value.size == param.size and np.array_equal(np.sort(value.ravel()), np.sort(param.ravel())):
        return "a reordering"
    return None


def main():
    folder, name = sys.argv[1:3]
    path = os.path.join(folder, name)
    info = json.load(open(path + ".json"))
    params = {n: a for n, a in zoo.load_safetensors(path + ".inputs.safetensors").items()
              if n in info["trainable"]}
    model = onnx.load(path + ".train.onnx")
    for tensor in model.graph.initializer:
        value = numpy_helper.to_array(tensor)
        if value.dtype != np.float32:
            continue
        found = [(n, r) for n, p in params.items() for r in [relation(value, p)] if r]
        print(f"{tensor.name} {list(value.shape)}: " +
              ("; ".join(f"{r} of {n}" for n, r in found[:2]) if found else "no parameter"))


if __name__ == "__main__":
    main()
