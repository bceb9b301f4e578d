#!/usr/bin/python3
"""PyTorch modules exported to ONNX, trained through kiln's CPU reference, against PyTorch.

    torch_parity.py --kiln-opt KILN_OPT --kiln-ref KILN_REF --work DIR [--only NAME]

Each case is a small module whose forward returns a scalar loss (the loss
inside the graph, as samples/onnx exports it) through ops kiln imports onto
an op of its own. With fresh random f32 parameters and inputs (the seed is
printed), torch.onnx.export writes it at each opset the case names, in
training mode; kiln-opt builds the training step from the ONNX file
(--trainable=all, the pipeline of --train=sgd) and kiln-ref runs its
forward_backward entry on the CPU reference in f64 at the ONNX initializers
and the inputs. The same module in float64 in PyTorch, from the same
parameters and inputs, gives the reference: the loss must agree within
1e-6 relative and every parameter's gradient within 1e-6 of its norm
(kiln-ref writes f32). Prints one line per case and opset, then PASS or
FAIL; exit status 1 on any failure.
"""
import argparse
import io
import json
import os
import struct
import subprocess
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

TOLERANCE = 1e-6
SEED = int.from_bytes(os.urandom(4), "little")


# ---------------------------------------------------------------------------
# The cases: a module, the shapes of its inputs, the opsets to export at.

class Resample(torch.nn.Module):
    """A per-channel scale (the parameter), F.interpolate, a squared error."""

    def __init__(self, channels, **interpolate):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(1, channels, 1, 1))
        self.interpolate = interpolate

    def forward(self, x, target):
        y = F.interpolate(x * self.weight, **self.interpolate)
        return ((y - target) ** 2).mean()


def resample(name, shape, out, opsets=(11, 13, 17), **interpolate):
    return (name, lambda: Resample(shape[1], **interpolate),
            {"x": shape, "target": shape[:2] + out}, opsets)


class Scaled(torch.nn.Module):
    """A per-channel scale (a parameter), a layer, a squared error."""

    def __init__(self, shape, layer):
        super().__init__()
        self.scale = torch.nn.Parameter(
            1 + 0.2 * torch.randn(1, shape[1], *[1] * (len(shape) - 2)))
        self.layer = layer

    def forward(self, x, target):
        return ((self.layer(x * self.scale) - target) ** 2).mean()


def scaled(name, shape, out, make_layer, opsets=(11, 13, 17)):
    def make():
        module = Scaled(shape, make_layer())
        with torch.no_grad():  # parameters away from their initial values
            for p in module.layer.parameters():
                p.add_(0.3 * torch.randn_like(p))
        return module
    return (name, make, {"x": shape, "target": out}, opsets)


def normalized(name, shape, make_norm):
    return scaled(name, shape, shape, make_norm)


CASES = [
    resample("upsample_nearest_2x", [2, 3, 4, 5], [8, 10], scale_factor=2,
             mode="nearest"),
    resample("upsample_nearest_sizes", [2, 3, 4, 5], [7, 12], size=(7, 12),
             mode="nearest"),
    resample("downsample_nearest_half", [2, 3, 8, 6], [4, 3],
             scale_factor=0.5, mode="nearest"),
    resample("upsample_bilinear", [2, 3, 4, 5], [8, 10], scale_factor=2,
             mode="bilinear", align_corners=False),
    resample("upsample_bilinear_align_corners", [2, 3, 4, 5], [8, 10],
             scale_factor=2, mode="bilinear", align_corners=True),
    resample("resize_bilinear_sizes", [2, 3, 4, 6], [7, 5], size=(7, 5),
             mode="bilinear", align_corners=False),
    resample("downsample_bilinear", [2, 3, 8, 6], [4, 3], scale_factor=0.5,
             mode="bilinear", align_corners=False),
    normalized("group_norm", [2, 8, 5, 6],
               lambda: torch.nn.GroupNorm(4, 8, eps=1e-3)),
    normalized("group_norm_no_affine", [3, 6, 4, 4],
               lambda: torch.nn.GroupNorm(2, 6, affine=False)),
    normalized("group_norm_one_group", [2, 6, 3, 5],
               lambda: torch.nn.GroupNorm(1, 6)),
    normalized("instance_norm_affine", [2, 4, 5, 6],
               lambda: torch.nn.InstanceNorm2d(4, affine=True)),
    scaled("conv_transpose2d", [2, 4, 5, 6], [2, 6, 10, 12],
           lambda: torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                            output_padding=1)),
    scaled("conv_transpose2d_dilated_groups", [2, 4, 4, 5], [2, 6, 6, 11],
           lambda: torch.nn.ConvTranspose2d(4, 6, (2, 3), stride=(1, 2),
                                            padding=(0, 1), dilation=2,
                                            groups=2, bias=False)),
    scaled("conv_transpose1d", [2, 3, 7], [2, 5, 14],
           lambda: torch.nn.ConvTranspose1d(3, 5, 4, stride=2, padding=1)),
    scaled("reflection_pad2d", [2, 3, 5, 6], [2, 3, 8, 9],
           lambda: torch.nn.ReflectionPad2d((1, 2, 2, 1)), (9, 11, 13, 17)),
    scaled("replication_pad2d", [2, 3, 4, 5], [2, 3, 7, 8],
           lambda: torch.nn.ReplicationPad2d((3, 0, 1, 2)), (9, 11, 13, 17)),
    scaled("reflection_pad1d", [2, 3, 6], [2, 3, 10],
           lambda: torch.nn.ReflectionPad1d(2)),
    scaled("replication_pad1d", [2, 3, 5], [2, 3, 9],
           lambda: torch.nn.ReplicationPad1d((1, 3))),
]


# ---------------------------------------------------------------------------
# safetensors (F32 in, F32 or F64 out), with the standard library and numpy.

def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = {"F32": np.float32, "F64": np.float64}[entry["dtype"]]
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(body[begin:end], dtype).reshape(
            entry["shape"]).astype(np.float64)
    return tensors


# ---------------------------------------------------------------------------

def run_case(args, name, make, shapes, opset):
    """Returns a failure message or None."""
    torch.manual_seed(SEED)
    module = make()
    inputs = {n: torch.randn(*s) for n, s in shapes.items()}
    path = os.path.join(args.work, f"{name}.opset{opset}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, tuple(inputs.values()), path,
                          input_names=list(inputs), output_names=["loss"],
                          opset_version=opset, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
    model = onnx.load(path)
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer
               if t.data_type == onnx.TensorProto.FLOAT}
    state = dict(module.named_parameters())
    missing = sorted(set(state) - set(weights))
    if missing:
        return f"parameters {missing} are not ONNX initializers"

    # kiln: the training step from the ONNX file, on the CPU reference in f64.
    step = path + ".step.mlir"
    data = path + ".inputs.safetensors"
    out = path + ".kiln.safetensors"
    save_safetensors(data, {**{n: state[n].detach().numpy() for n in state},
                            **{n: t.numpy() for n, t in inputs.items()}})
    for command in (
            [args.kiln_opt, path, "--trainable=" + ",".join(sorted(state)),
             "--kiln-pipeline=train=sgd", "-o", step],
            [args.kiln_ref, step, "--function", "forward_backward",
             "--inputs", data, "--precision", "f64", "-o", out]):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            return f"{os.path.basename(command[0])}: {result.stderr.strip()}"
    got = load_safetensors(out)

    # PyTorch in float64 from the same values.
    module = module.double()
    for p in module.parameters():
        p.grad = None
    loss = module(*(t.double() for t in inputs.values()))
    loss.backward()
    expected = loss.item()
    error = abs(got["loss"].item() - expected) / max(abs(expected), 1e-30)
    worst = f"loss {error:.1e}"
    if error > TOLERANCE:
        return f"loss {got['loss'].item()!r}, PyTorch's {expected!r}"
    for n, p in module.named_parameters():
        g = p.grad.numpy()
        norm = max(np.linalg.norm(g), 1e-30)
        error = np.abs(got["grad." + n] - g).max() / norm
        worst += f", grad.{n} {error:.1e}"
        if error > TOLERANCE:
            return f"grad.{n} differs by {error:.2e} of its norm"
    print(f"PASS {name} opset {opset}: {worst}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kiln-opt", required=True)
    parser.add_argument("--kiln-ref", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--only", help="run the cases whose name has this")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    print(f"torch_parity: torch {torch.__version__}, seed {SEED}")
    failures = 0
    for name, make, shapes, opsets in CASES:
        if args.only and args.only not in name:
            continue
        for opset in opsets:
            message = run_case(args, name, make, shapes, opset)
            if message:
                failures += 1
                print(f"FAIL {name} opset {opset}: {message}")
    print("FAIL" if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
