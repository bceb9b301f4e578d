#!/usr/bin/python3
"""ResNet-18 from ONNX: the inference artifact is its weights plus its code.

    bench/resnet18_onnx_weights.py OUTDIR [--kilnc PATH] [--batch 32]

Exports torchvision's ResNet-18 (fresh weights under torch.manual_seed(0),
no download) with torch.onnx.export at opset 17 in training mode, as the
real-models work exports its zoo (Debian's python3-torch and
python3-torchvision, CPU), then compiles it with kilnc (default: the one
bazel-bin holds) for inference and for training (--trainable=all
--loss=cross_entropy --target=labels --train=sgd), each with an empty
kernel cache (--no-kernel-cache), and the inference once more with a warm
cache, under /usr/bin/time. Prints a Markdown table of the compile times,
peak memory and artifact sizes: the weights (the initializers' bytes), each
artifact's code (the bytes before its data section, read from the envelope)
and its data section, and the ratio inference / (weights + training code),
which must stay at most 1.1. Exits 1 when it does not.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time


def export(path, batch):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).train()
    x = torch.randn(batch, 3, 224, 224)
    torch.onnx.export(model, (x,), path, opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, input_names=["x"],
                      output_names=["logits"])


def weight_bytes(path):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(path)
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)


def envelope(path):
    """(file size, code bytes, data section bytes) from the artifact's
    envelope: FlatBuffers root table, fields format_version, checksum,
    payload, data_offset, data_size."""
    data = open(path, "rb").read()
    root = struct.unpack_from("<I", data, 0)[0]
    vtable = root - struct.unpack_from("<i", data, root)[0]
    vtable_size = struct.unpack_from("<H", data, vtable)[0]

    def field(index, fmt):
        if 4 + 2 * index >= vtable_size:
            return 0
        offset = struct.unpack_from("<H", data, vtable + 4 + 2 * index)[0]
        return struct.unpack_from(fmt, data, root + offset)[0] if offset else 0

    data_offset, data_size = field(3, "<Q"), field(4, "<Q")
    return len(data), data_offset if data_size else len(data), data_size


def timed(command):
    """Runs `command` under /usr/bin/time: (wall s, user+sys s, peak MiB)."""
    with tempfile.NamedTemporaryFile("r") as report:
        subprocess.run(["/usr/bin/time", "-o", report.name, "-f",
                        "%e %U %S %M"] + command, check=True)
        wall, user, system, rss = report.read().split()[-4:]
    return float(wall), float(user) + float(system), int(rss) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--kilnc", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "bazel-bin",
        "tools", "kilnc", "kilnc"))
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    model = os.path.join(args.outdir, "resnet18.onnx")
    export(model, args.batch)
    weights = weight_bytes(model)
    out = {k: os.path.join(args.outdir, k + ".kiln") for k in
           ("inference", "training", "inference_warm")}
    runs = {
        "inference": [args.kilnc, model, "--inference", "--no-kernel-cache",
                      "-o", out["inference"]],
        "training": [args.kilnc, model, "--trainable=all",
                     "--loss=cross_entropy", "--target=labels", "--train=sgd",
                     "--no-kernel-cache", "-o", out["training"]],
    }
    cache = os.path.join(args.outdir, "kernel-cache")
    warm = [args.kilnc, model, "--inference", "--kernel-cache", cache, "-o",
            out["inference_warm"]]
    results = {name: timed(command) for name, command in runs.items()}
    subprocess.run(warm, check=True)  # fills the cache
    results["inference, warm kernel cache"] = timed(warm)
    load = open("/proc/loadavg").read().split()[0]

    sizes = {k: envelope(v) for k, v in out.items() if k != "inference_warm"}
    ratio = sizes["inference"][0] / (weights + sizes["training"][1])
    version = subprocess.run([args.kilnc, "--version"], capture_output=True,
                             text=True).stdout.splitlines()[0]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {version}\n")
    print(f"ResNet-18 (torchvision, opset 17, batch {args.batch} at 224x224), "
          f"{weights} bytes of weights; {os.cpu_count()} cores, load "
          f"average {load} at the end\n")
    print("| compile | wall s | CPU s | peak MiB |")
    print("| --- | ---: | ---: | ---: |")
    for name, (wall, cpu, rss) in results.items():
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:.0f} |")
    print("\n| artifact | bytes | code | data section |")
    print("| --- | ---: | ---: | ---: |")
    for name, (size, code, data) in sizes.items():
        print(f"| {name} | {size} | {code} | {data} |")
    print(f"\ninference / (weights + training code) = {ratio:.3f} "
          f"(at most 1.1)")
    same = open(out["inference"], "rb").read() == open(
        out["inference_warm"], "rb").read()
    print(f"inference artifacts with and without the cache identical: {same}")
    return 0 if ratio <= 1.1 and same else 1


if __name__ == "__main__":
    sys.exit(main())
