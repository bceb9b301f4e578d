#!/usr/bin/env python3
"""Writes the ResNet-18 models of the benchmarks (CIFAR-style: 32x32 inputs,
10 classes), NHWC, f32 (kilnc --precision=bf16 stores them in bf16):

  bench/models/resnet18_32.mlir        widths 64/128/256/512, batch 128: the
                                       timed training step (kilnc
                                       --train=adamw --precision=bf16);
  bench/models/resnet18_32_check.mlir  the same layers at widths 8/16/32/64,
                                       batch 16: kiln-ref draws its parameters
                                       and computes its loss in f64, which
                                       bench/run.py checks its PyTorch model by.

The network (bench/bench_resnet.py's resnet18_convs and resnet18_module): a 3x3 stem
conv (3 -> 64), batch norm, ReLU; four stages of two BasicBlocks (conv 3x3,
batch norm, ReLU, conv 3x3, batch norm, plus the shortcut, ReLU) of 64, 128,
256 and 512 channels, the first block of stages 2-4 with stride 2 and a 1x1
stride-2 projection shortcut with its batch norm; global average pooling;
Linear 512 -> 10; mean cross entropy. Batch norms keep running statistics
(kiln.state, momentum 0.1, eps 1e-5) as torch.nn.BatchNorm2d does.

    python3 bench/models/gen_resnet18.py [--check] [--out DIR]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import bench_resnet as resnet  # noqa: E402  bench/bench_resnet.py: the network's layers and names
import model_files  # noqa: E402


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def model(widths, batch, name):
    """The text of the model file: func.func @loss."""
    size, classes = resnet.RESNET_SIZE, resnet.RESNET_CLASSES
    convs = resnet.resnet18_convs(widths)
    args, body = [], []

    def arg(name, shape, attr):
        args.append(f'    %{name}: {tensor(shape)} {{{attr}, kiln.name = "{name}"}}')

    for kname, _, _, cin, cout, k, _, _ in convs:
        arg(f"{kname}_w", [cout, k, k, cin], "kiln.param = #kiln.init<kaiming, gain = 1.4142135>")
        arg(f"{kname}_bn_g", [cout], "kiln.param = #kiln.init<ones>")
        arg(f"{kname}_bn_b", [cout], "kiln.param = #kiln.init<zeros>")
        arg(f"{kname}_bn_rm", [cout], "kiln.state = #kiln.init<zeros>")
        arg(f"{kname}_bn_rv", [cout], "kiln.state = #kiln.init<ones>")
    arg("fc_w", [widths[-1], classes], "kiln.param = #kiln.init<normal, std = 0.02>")
    arg("fc_b", [classes], "kiln.param = #kiln.init<zeros>")
    args.append(f'    %x: {tensor([batch, size, size, 3])} {{kiln.name = "x"}}')
    args.append(f'    %y: {tensor([batch], "i32")} {{kiln.name = "y"}}')

    by_name = {c[0]: c for c in convs}

    def conv_bn(kname, value, shape, relu):
        """conv2d, batch norm (with running statistics) and optionally ReLU
        of `value` [N, H, W, C]; returns the result and its shape."""
        _, _, _, cin, cout, k, stride, pad = by_name[kname]
        n, h, w, c = shape
        assert c == cin, (kname, shape)
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        out = [n, oh, ow, cout]
        attrs = "layout = nhwc"
        if stride != 1:
            attrs += f" stride = [{stride}, {stride}]"
        if pad:
            attrs += " padding = [" + ", ".join([str(pad)] * 4) + "]"
        t_in, t_out, t_w, t_c = tensor(shape), tensor(out), tensor([cout, k, k, cin]), tensor([cout])
        body.append(f"  %{kname}_c = kiln.conv2d %{value}, %{kname}_w {attrs} : {t_in}, {t_w}")
        body.append(
            f"  %{kname}_n, %{kname}_m, %{kname}_v, %{kname}_rm1, %{kname}_rv1 = kiln.batch_norm "
            f"%{kname}_c, %{kname}_bn_g, %{kname}_bn_b running %{kname}_bn_rm, %{kname}_bn_rv "
            f"momentum = 0.1 dim = 3 eps = 1.0e-05 : {t_out}, {t_c}, {t_c}, {t_c}, {t_c}")
        if not relu:
            return f"{kname}_n", out
        body.append(f"  %{kname}_r = kiln.relu %{kname}_n : {t_out}")
        return f"{kname}_r", out

    body.append("  // Stem: 3x3 conv, batch norm, ReLU.")
    h, shape = conv_bn("conv1", "x", [batch, size, size, 3], True)
    for stage, cout in enumerate(widths, 1):
        for i in range(2):
            kp = f"layer{stage}_{i}"
            body.append(f"  // Stage {stage}, block {i}: {shape[3]} -> {cout}"
                        + (", stride 2, projection shortcut." if f"{kp}_down" in by_name else "."))
            a, a_shape = conv_bn(f"{kp}_conv1", h, shape, True)
            b, b_shape = conv_bn(f"{kp}_conv2", a, a_shape, False)
            shortcut = h
            if f"{kp}_down" in by_name:
                shortcut, _ = conv_bn(f"{kp}_down", h, shape, False)
            t = tensor(b_shape)
            body.append(f"  %{kp}_sum = kiln.add %{b}, %{shortcut} : {t}, {t}")
            body.append(f"  %{kp}_out = kiln.relu %{kp}_sum : {t}")
            h, shape = f"{kp}_out", b_shape
    n, _, _, c = shape
    body += [
        "  // Global average pooling, Linear, mean cross entropy.",
        f"  %pool = kiln.reduce_mean %{h} dims = [1, 2] : {tensor(shape)}",
        f"  %z = kiln.matmul %pool, %fc_w : {tensor([n, c])}, {tensor([c, classes])}",
        f"  %logits = kiln.add %z, %fc_b : {tensor([n, classes])}, {tensor([classes])}",
        f"  %loss = kiln.cross_entropy %logits, %y label_smoothing = 0.0 : "
        f"{tensor([n, classes])}, {tensor([n], 'i32')}",
        "  return %loss : tensor<f32>",
        "}",
    ]
    params = 0
    for _, _, _, cin, cout, k, _, _ in convs:
        params += cout * k * k * cin + 2 * cout
    params += widths[-1] * classes + classes
    head = [
        f"// ResNet-18, CIFAR-style ({size}x{size} inputs, {classes} classes), NHWC, batch "
        f"{batch}, widths {'/'.join(map(str, widths))}:",
        f"// {len(convs)} convolutions, each with a batch norm; {params} parameters.",
        "// Written by bench/models/gen_resnet18.py (see there for the network);",
    ]
    if name == "resnet18_32":
        head += ["// bench/run.py times its train_step (kilnc --train=adamw",
                 "// --precision=bf16) against the same network in PyTorch."]
    else:
        head += ["// bench/run.py checks its PyTorch model against kiln-ref's f64 loss",
                 "// of this one at kiln-ref's parameters (bench/make_bundle.sh)."]
    head += ["// Filters are [O, KH, KW, C] (kaiming normal, gain sqrt(2)); fc is",
             "// [in, out] (x @ W)."]
    return "\n".join(head + ["func.func @loss("] + [",\n".join(args) + ") -> tensor<f32> {"]
                     + body) + "\n"


MODELS = (("resnet18_32", resnet.RESNET_WIDTHS, resnet.RESNET_BATCH),
          ("resnet18_32_check", resnet.RESNET_CHECK_WIDTHS, resnet.RESNET_CHECK_BATCH))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="directory (default: bench/models)")
    p.add_argument("--check", action="store_true",
                   help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    texts = {os.path.join(args.out, f"{name}.mlir"): model(widths, batch, name)
             for name, widths, batch in MODELS}
    return model_files.write_or_check(texts, args.check, "gen_resnet18.py")

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
