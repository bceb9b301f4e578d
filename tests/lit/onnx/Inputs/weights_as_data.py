#!/usr/bin/env python3
"""Checks that an imported ONNX model's weights travel as data.

    weights_as_data.py make WORKDIR
        writes WORKDIR/cnn.onnx (Conv 3->8 3x3, Relu, Flatten, Gemm with
        transB to 5 classes: what torch.onnx exports for a small CNN), its
        weights drawn fresh from numpy's default generator, and
        WORKDIR/batch.safetensors (x and labels).
    weights_as_data.py check WORKDIR
        after the lit test compiled WORKDIR/{inference,train,bf16}.kiln and
        WORKDIR/inference.cu (kilnc --emit=cuda) and ran kiln-ref on the
        model's loss at its own weights into WORKDIR/loss.safetensors:
        - every weight's bytes lie in each artifact's data section (at a
          multiple of 64 bytes, as the format lays values out), the bf16
          artifact's as the f32 master weight and rounded to nearest even
          as the bf16 parameter;
        - the CUDA source carries no table of more than 16 elements;
        - the inference artifact is its weights plus at most its training
          artifact's other bytes;
        - kiln-ref's f64 loss (the weights from the model itself, no
          weights file) equals numpy's f64 loss within 1e-7 relative (it is
          written as f32).
        Prints what it checked and PASS, or FAIL and exits 1.
"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sgd_against_numpy import load, save  # noqa: E402

N, C, H, W, K, CLASSES = 2, 3, 6, 6, 8, 5


def make(workdir):
    rng = np.random.default_rng()
    weights = {
        "conv.weight": rng.uniform(-0.5, 0.5, (K, C, 3, 3)),
        "conv.bias": rng.uniform(-0.5, 0.5, K),
        "fc.weight": rng.uniform(-0.2, 0.2, (CLASSES, K * H * W)),
        "fc.bias": rng.uniform(-0.2, 0.2, CLASSES),
    }
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"],
                         name="/conv/Conv", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="/Relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="/Flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"],
                         name="/fc/Gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       [N, CLASSES])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(workdir, exist_ok=True)
    onnx.save(model, os.path.join(workdir, "cnn.onnx"))
    np.savez(os.path.join(workdir, "weights.npz"), **weights)
    save(os.path.join(workdir, "batch.safetensors"), {
        "x": rng.standard_normal((N, C, H, W)).astype(np.float32),
        "labels": rng.integers(0, CLASSES, N).astype(np.int32)})


def bf16_bits(values):
    """f32 -> bf16 rounded to nearest even, as uint16 (finite values)."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def aligned_offsets(data, needle):
    """Offsets of `needle` in `data` that are multiples of 64."""
    found, start = [], 0
    while True:
        at = data.find(needle, start)
        if at < 0:
            return found
        if at % 64 == 0:
            found.append(at)
        start = at + 1


def numpy_loss(weights, x, labels):
    w, b = weights["conv.weight"].astype(np.float64), weights["conv.bias"]
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((N, K, H, W))
    for i in range(3):
        for j in range(3):
            conv += np.einsum("nchw,kc->nkhw", padded[:, :, i:i + H, j:j + W],
                              w[:, :, i, j])
    conv += b.astype(np.float64)[None, :, None, None]
    flat = np.maximum(conv, 0).reshape(N, -1)
    logits = flat @ weights["fc.weight"].astype(np.float64).T + weights["fc.bias"]
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return -logp[np.arange(N), labels].mean()


def check(workdir):
    weights = dict(np.load(os.path.join(workdir, "weights.npz")))
    failures = []
    files = {name: open(os.path.join(workdir, name + ".kiln"), "rb").read()
             for name in ("inference", "train", "bf16")}
    weight_bytes = sum(v.nbytes for v in weights.values())
    for name, value in weights.items():
        if value.size <= 16:
            continue  # small tables stay in the kernels
        for artifact in ("inference", "train"):
            if not aligned_offsets(files[artifact], value.tobytes()):
                failures.append(f"{artifact}.kiln lacks {name}'s values")
        if not aligned_offsets(files["bf16"], value.tobytes()):
            failures.append(f"bf16.kiln lacks master.{name}'s f32 values")
        if not aligned_offsets(files["bf16"], bf16_bits(value).tobytes()):
            failures.append(f"bf16.kiln lacks {name}'s bf16 values")
    print(f"weights_as_data: {weight_bytes} bytes of weights found in the "
          f"data sections")

    source = open(os.path.join(workdir, "inference.cu")).read()
    tables = [int(n) for n in
              re.findall(r"static __device__ const \w+ \w+\[(\d+)\]", source)]
    if any(n > 16 for n in tables):
        failures.append(f"the CUDA source has tables of {max(tables)} elements")
    print(f"weights_as_data: {len(source)} bytes of CUDA, the largest table "
          f"{max(tables, default=0)} elements")

    # Without its weights the inference artifact is no larger than the
    # training artifact without its (which has more kernels).
    code = len(files["inference"]) - weight_bytes
    train_code = len(files["train"]) - weight_bytes
    print(f"weights_as_data: inference artifact {len(files['inference'])} "
          f"bytes, {code} beside the weights (training: {train_code})")
    if code > train_code:
        failures.append("the inference artifact's code outgrows training's")

    batch = load(os.path.join(workdir, "batch.safetensors"))
    expected = numpy_loss(weights, batch["x"], batch["labels"])
    loss = float(load(os.path.join(workdir, "loss.safetensors"))["loss"])
    difference = abs(loss - expected) / abs(expected)
    print(f"weights_as_data: kiln-ref loss at the model's weights {loss:.9g}, "
          f"numpy {expected:.9g}")
    if difference > 1e-7:
        failures.append(f"kiln-ref's loss differs by {difference:.3g}")
    for failure in failures:
        print("FAIL:", failure)
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    command, workdir = sys.argv[1], sys.argv[2]
    sys.exit(make(workdir) if command == "make" else check(workdir))
