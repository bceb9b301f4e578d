#!/usr/bin/env python3
"""The ONNX sample, PyTorch side (run on the GPU machine: torch and onnx).

    python3 samples/onnx/export_mlp.py OUTDIR [--device cuda]

1. Defines a small MLP classifier (16 features -> 64 ReLU -> 64 Tanh -> 4
   classes) with torch.manual_seed(0) and exports it with
   torch.onnx.export(..., dynamo=False, opset_version=17) as
   OUTDIR/mlp.onnx (input "x" [64, 16], output "logits" [64, 4]); then
   rewrites the model's ir_version to 8 with the onnx package, so that
   Debian's libonnx 1.12 (what kilnc reads it with) accepts it.
2. Writes the initial weights (OUTDIR/torch_initial.safetensors, by the
   ONNX initializer names) and one fixed batch (OUTDIR/batch.safetensors:
   "x" F32 [64, 16], "labels" I32 [64]).
3. Trains the model 50 steps in PyTorch on that batch (SGD lr 0.1, no
   momentum, cross entropy, f32 with TF32 off) and writes the loss of every
   step, one per line, to OUTDIR/torch_losses.txt (the loss at the
   parameters before each step's update, as kiln-run prints it).

kiln then trains the same .onnx (samples/onnx/make_bundle.sh here,
run.sh there) and compare_losses.py checks that the 50 losses agree.
"""
import argparse
import json
import os
import struct
import sys

import onnx
import torch

BATCH, FEATURES, HIDDEN, CLASSES = 64, 16, 64, 4
STEPS, LR = 50, 0.1


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(FEATURES, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, HIDDEN)
        self.head = torch.nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        return self.head(torch.tanh(self.fc2(torch.relu(self.fc1(x)))))


def save_safetensors(path, tensors):
    """tensors: {name: torch tensor (float32 or int32)}, standard library only."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().cpu().contiguous()
        dtype = {torch.float32: "F32", torch.int32: "I32"}[t.dtype]
        raw = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    torch.manual_seed(0)
    model = Mlp()
    x = torch.randn(BATCH, FEATURES)
    labels = torch.randint(0, CLASSES, (BATCH,), dtype=torch.int32)

    path = os.path.join(args.outdir, "mlp.onnx")
    torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                      input_names=["x"], output_names=["logits"])
    exported = onnx.load(path)
    exported.ir_version = 8
    onnx.save(exported, path)
    names = [t.name for t in exported.graph.initializer]
    state = model.state_dict()
    missing = [n for n in names if n not in state]
    if missing:
        sys.exit(f"export_mlp: initializers {missing} are not parameters")
    save_safetensors(os.path.join(args.outdir, "torch_initial.safetensors"),
                     {n: state[n] for n in names})
    save_safetensors(os.path.join(args.outdir, "batch.safetensors"),
                     {"x": x, "labels": labels})

    model = model.to(args.device)
    xd, yd = x.to(args.device), labels.long().to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xd), yd)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    with open(os.path.join(args.outdir, "torch_losses.txt"), "w") as f:
        f.write("".join(f"{v:.9g}\n" for v in losses))
    print(f"export_mlp: {path} (initializers {', '.join(names)}); torch losses "
          f"{losses[0]:.6f} -> {losses[-1]:.6f} over {STEPS} steps")


if __name__ == "__main__":
    main()
