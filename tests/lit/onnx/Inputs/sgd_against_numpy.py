#!/usr/bin/env python3
"""Trains an ONNX MLP as torch.onnx exports nn.Linear layers (Gemm with
transB) through kiln on the CPU reference and checks it against SGD in f64
numpy.

    sgd_against_numpy.py WORKDIR [--steps 50]

Builds the model with python3-onnx (fresh random weights and batch from
numpy's default generator), compiles it with kilnc --trainable=all
--loss=cross_entropy --target=labels --train=sgd --emit=mlir
--onnx-weights (kilnc and kiln-ref on PATH), runs the fused train_step
entry with kiln-ref step after step, and bounds the relative difference of
every step's loss by 1e-5 (f32 storage against f64). Prints the largest
difference and PASS, or FAIL and exits 1.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BATCH, FEATURES, HIDDEN, CLASSES, LR = 32, 6, 16, 3, 0.1
DTYPES = {"F32": np.float32, "I32": np.int32}


def save(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32"}[array.dtype]
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + begin:8 + n + end],
                                  DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir")
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng()
    weights = {}
    for name, fan_in, fan_out in [("fc1", FEATURES, HIDDEN), ("fc2", HIDDEN, HIDDEN),
                                  ("head", HIDDEN, CLASSES)]:
        bound = 1 / np.sqrt(fan_in)
        weights[name + ".weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        weights[name + ".bias"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int32)

    gemm = lambda layer, a, out: helper.make_node(
        "Gemm", [a, layer + ".weight", layer + ".bias"], [out], name=f"/{layer}/Gemm",
        alpha=1.0, beta=1.0, transB=1)
    nodes = [gemm("fc1", "x", "a"), helper.make_node("Relu", ["a"], ["b"], name="/Relu"),
             gemm("fc2", "b", "c"), helper.make_node("Tanh", ["c"], ["d"], name="/Tanh"),
             gemm("head", "d", "logits")]
    graph = helper.make_graph(
        nodes, "main_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [BATCH, CLASSES])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(args.workdir, "mlp.onnx")
    onnx.save(model, path)

    ir = os.path.join(args.workdir, "mlp_ir.mlir")
    initial = os.path.join(args.workdir, "initial.safetensors")
    subprocess.run(["kilnc", path, "--trainable=all", "--loss=cross_entropy",
                    "--target=labels", "--train=sgd", "--emit=mlir",
                    "--onnx-weights=" + initial, "-o", ir], check=True)
    params = load(initial)
    for name, value in weights.items():
        assert np.array_equal(params[name], value), f"--onnx-weights: {name} differs"

    w = {k: v.astype(np.float64) for k, v in weights.items()}
    x64, worst = x.astype(np.float64), 0.0
    step_in = os.path.join(args.workdir, "step_in.safetensors")
    step_out = os.path.join(args.workdir, "step_out.safetensors")
    for step in range(args.steps):
        # f64 reference: forward, cross entropy, backward, SGD.
        a = x64 @ w["fc1.weight"].T + w["fc1.bias"]
        b = np.maximum(a, 0)
        c = b @ w["fc2.weight"].T + w["fc2.bias"]
        d = np.tanh(c)
        logits = d @ w["head.weight"].T + w["head.bias"]
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        expected = -np.log(p[np.arange(BATCH), labels]).mean()
        g = p.copy()
        g[np.arange(BATCH), labels] -= 1
        g /= BATCH
        grads = {"head.weight": g.T @ d, "head.bias": g.sum(0)}
        gc = (g @ w["head.weight"]) * (1 - d * d)
        grads.update({"fc2.weight": gc.T @ b, "fc2.bias": gc.sum(0)})
        ga = (gc @ w["fc2.weight"]) * (a > 0)
        grads.update({"fc1.weight": ga.T @ x64, "fc1.bias": ga.sum(0)})
        for k in w:
            w[k] -= LR * grads[k]
        # kiln: the fused train_step entry on the CPU reference.
        inputs = dict(params)
        inputs.update({"x": x, "labels": labels,
                       "lr": np.array(LR, np.float32), "step": np.array(step, np.int32)})
        save(step_in, inputs)
        subprocess.run(["kiln-ref", ir, "--function", "train_step", "--inputs", step_in,
                        "-o", step_out], check=True)
        params = load(step_out)
        loss = float(params.pop("loss"))
        worst = max(worst, abs(loss - expected) / expected)
    print(f"sgd_against_numpy: {args.steps} steps, largest relative loss "
          f"difference {worst:.3g}")
    print("PASS" if worst <= 1e-5 else "FAIL")
    return 0 if worst <= 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
