#!/usr/bin/env python3
"""Writes the convolution-kernel check models into a folder.

The GPU check of kiln.conv2d's kernels (the forward, conv2d_backward_input
and conv2d_backward_filter). `SEED=N tests/gpu/conv/make_bundle.sh [DIR]`
(default .gpu-bundle/conv) compiles every model written here with kilnc in
five modes (inference; f32 sgd; tf32 sgd; bf16 adamw; f16 adamw), draws
its arguments and computes kiln-ref's f64 outputs of the entry it checks
(tests/ops/make_gpu_cases.sh); on the GPU machine, `DIR/run_gpu_cases.sh
DIR LOGDIR` compares the GPU's outputs with them element by element. Every
case comes in both layouts (nchw, and nhwc with its [O, KH, KW, C/groups]
filter).

Training cases: a summed MSE loss over one kiln.conv2d whose input, filter
and bias are all parameters, so that forward_backward checks the forward
(through the loss and its gradient), the input gradient (dgrad), the filter
gradient (wgrad) and the bias gradient. The grid: 1x1 (64 -> 64, and 1x1
stride 2 on an odd size), 3x3 pad 1 (32 -> 48, 14x14), 5x5 pad 2, the 7x7
stride 2 pad 3 stem on 3 channels, 3x3 dilation 2, groups 2, depthwise
(stride 1 and 2), odd spatial sizes (13x11), asymmetric padding
[0, 1, 1, 2] with stride [2, 1], a 1x7 kernel, batch 1, channel counts that
are not a multiple of 8 (5 -> 7), no bias, and one larger case (N=2,
64 -> 64, 20x20, 3x3: several tiles, partial ones, 800-term filter-gradient
reductions), and three whose bf16/f16 passes fill the sm_90 wgmma kernel's
tiles (64 channels and more: stride 2 with 72 outputs, partial tiles; two
groups of 64; 256 outputs), their forward passes copied by the TMA's im2col
copies (with dilation 2, asymmetric padding and stride [2, 1] on 41x21, and
5x5 on batch 1 too).
Inference cases (`// gpu-modes: inference`, the forward entry): a conv
followed by an element-wise epilogue the kernel may fuse (bias + relu;
+ residual, relu; a cast to bf16), on sizes that leave partial tiles.

Parameters take their own initialisers (`// gpu-init-params`): x ~ N(0, a),
w ~ N(0, 0.5 / (a sqrt(K))) with K = C/groups * KH * KW, so that the output
has rms 0.5 (the bias std 0.25, the target uniform in [-1, 1): the summed
loss, about 0.65 per output element, stays within f16, where the f16 mode
keeps it), and a = sqrt(0.5) (Kb / (K P))^(1/4) (Kb = O/groups * KH * KW /
(sh * sw) output positions per input position, P = N * OH * OW) balances
the input and filter gradients, each about 1.6 a sqrt(P) in rms (2.5 to 15
here; the bias gradient, about 2 P times its bias, up to 1000); the loss
sums, so no gradient shrinks with the size.

Tolerances against f64 (|out - ref| <= atol + rtol |ref|):
  - f32 (inference, f32_sgd): rtol 1e-4; atol four times the f32 rounding
    of the longest gradient sums (2^-24 sqrt(terms) rms), 2e-5 to 5e-4;
  - tf32 (tf32_sgd, products of operands rounded to 10 bits of mantissa):
    rtol 5e-3, atol 2e-3 of each output's largest magnitude
    (`// gpu-tf32-tolerance`);
  - bf16 (bf16_adamw, parameters, activations and gradients stored in bf16):
    rtol 5e-2, atol 1.5e-2 of each output's largest magnitude;
  - f16 (f16_adamw, stored in f16): rtol 1e-2, atol 2e-3 of each output's
    largest magnitude (`// gpu-f16-tolerance`);
  - the bf16 cast epilogue (one bf16 rounding of the result): rtol 1e-2,
    atol 1e-4.
kiln-ref in f32 (rounding every op's result to its storage type) on the
bf16 and f16 modules, and on the f32 module with x and w rounded to f16 (the
tf32 operands' precision), errs by at most a fifth of these tolerances.
    gen_models.py OUT_DIR
"""
import math
import os
import sys

# name, N, C, H, W, O, (KH, KW), stride, padding [t, b, l, r], dilation,
# groups, bias
CASES = [
    ("k1_c64", 2, 64, 9, 9, 64, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True),
    ("k1_s2", 2, 32, 11, 11, 64, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, True),
    ("k3_c32_o48", 2, 32, 14, 14, 48, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("k5_p2", 2, 16, 12, 12, 24, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, True),
    ("stem_k7_s2", 2, 3, 22, 22, 64, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, True),
    ("k3_dil2", 2, 16, 12, 12, 16, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1, True),
    ("k3_groups2", 2, 32, 10, 10, 48, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, True),
    ("dw_k3", 2, 32, 12, 12, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 32, True),
    ("dw_k3_s2", 2, 24, 15, 15, 24, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 24, True),
    ("odd_13x11", 2, 16, 13, 11, 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("asym_pad", 2, 8, 10, 9, 12, (3, 3), (2, 1), (0, 1, 1, 2), (1, 1), 1, True),
    ("k1x7", 2, 16, 9, 12, 16, (1, 7), (1, 1), (0, 0, 3, 3), (1, 1), 1, True),
    ("batch1", 1, 32, 12, 12, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("c5_o7", 3, 5, 11, 10, 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("nobias", 2, 16, 8, 8, 32, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, False),
    ("large", 2, 64, 20, 20, 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True),
    ("wide_s2_o72", 2, 64, 15, 15, 72, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, True),
    ("wide_groups2", 2, 128, 10, 10, 128, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2, True),
    ("wide_o256", 1, 64, 12, 12, 256, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, False),
    ("wide_dil2_asym", 2, 64, 41, 21, 64, (3, 3), (2, 1), (0, 1, 1, 2), (2, 2), 1, True),
    ("wide_k5_batch1", 1, 64, 25, 25, 64, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1, True),
]

# Inference cases: name, N, C, H, W, O, kernel, stride, padding, epilogue.
EPILOGUE_CASES = [
    ("epi_bias_relu", 2, 16, 13, 11, 24, (3, 3), (1, 1), (1, 1, 1, 1), "relu"),
    ("epi_residual_relu", 2, 32, 14, 14, 32, (3, 3), (1, 1), (1, 1, 1, 1), "residual"),
    ("epi_cast_bf16", 2, 16, 9, 9, 24, (3, 3), (2, 2), (1, 1, 1, 1), "cast"),
]

LAYOUTS = ("nchw", "nhwc")
TF32_TOLERANCE = "5e-3 2e-3"
BF16_TOLERANCE = "5e-2 1.5e-2"
F16_TOLERANCE = "1e-2 2e-3"
# The training cases' conv output rms and bias std: the summed loss, about
# (0.25 + 0.0625 + 1/3) per element, stays within f16 (the f16 mode stores
# it in f16).
OUTPUT_RMS = 0.5
BIAS_STD = 0.25


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def out_size(size, before, after, dilation, kernel, stride):
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def sig(x, digits=3):
    """x to `digits` significant digits, as MLIR's float syntax takes it."""
    return float(f"{x:.{digits - 1}e}")


def round_up(x):
    """The smallest 1, 2 or 5 times a power of ten that is >= x."""
    exponent = math.floor(math.log10(x))
    for mantissa in (1, 2, 5, 10):
        if mantissa * 10 ** exponent >= x * (1 - 1e-9):
            return float(f"{mantissa * 10 ** exponent:.0e}")
    raise AssertionError


def short(x):
    """1e-4, not 1e-04."""
    return f"{x:.0e}".replace("e-0", "e-")


def shapes(layout, n, c, h, w, o, kh, kw, oh, ow, groups):
    if layout == "nchw":
        return [n, c, h, w], [o, c // groups, kh, kw], [n, o, oh, ow]
    return [n, h, w, c], [o, kh, kw, c // groups], [n, oh, ow, o]


def conv_line(layout, xs, ws, bias, stride, padding, dilation, groups):
    operands = "%x, %w, %b" if bias else "%x, %w"
    types = f"{tensor(xs)}, {tensor(ws)}" + (f", {tensor([ws[0]])}" if bias else "")
    attrs = f"layout = {layout} stride = [{stride[0]}, {stride[1]}] " \
            f"padding = [{', '.join(str(p) for p in padding)}]"
    if tuple(dilation) != (1, 1):
        attrs += f" dilation = [{dilation[0]}, {dilation[1]}]"
    if groups != 1:
        attrs += f" groups = {groups}"
    return f"%y = kiln.conv2d {operands} {attrs} : {types}"


def describe(layout, n, c, h, w, o, k, stride, padding, dilation, groups, oh, ow):
    return (f"// kiln.conv2d {layout}: N={n} C={c} {h}x{w} -> O={o} {oh}x{ow}, "
            f"kernel {k[0]}x{k[1]}, stride [{stride[0]}, {stride[1]}], padding "
            f"[{', '.join(str(p) for p in padding)}], dilation [{dilation[0]}, "
            f"{dilation[1]}], groups {groups}")


def function(args, result_type, body):
    lines = ["func.func @loss(", ",\n".join("    " + a for a in args) + f") -> {result_type} {{"]
    lines += ["  " + x for x in body]
    lines += [f"  return {body[-1].split(' =')[0]} : {result_type}", "}", ""]
    return lines


def training_model(layout, n, c, h, w, o, k, stride, padding, dilation, groups, bias):
    kh, kw = k
    oh = out_size(h, padding[0], padding[1], dilation[0], kh, stride[0])
    ow = out_size(w, padding[2], padding[3], dilation[1], kw, stride[1])
    assert oh > 0 and ow > 0 and c % groups == 0 and o % groups == 0
    xs, ws, ys = shapes(layout, n, c, h, w, o, kh, kw, oh, ow, groups)
    k_fwd = c // groups * kh * kw
    k_bwd = o // groups * kh * kw / (stride[0] * stride[1])
    p = n * oh * ow
    std_x = math.sqrt(OUTPUT_RMS) * (k_bwd / (k_fwd * p)) ** 0.25
    std_w = OUTPUT_RMS / (std_x * math.sqrt(k_fwd))
    # dy = 2 (y - t), t uniform in [-1, 1).
    square = OUTPUT_RMS ** 2 + (BIAS_STD ** 2 if bias else 0) + 1 / 3
    assert n * o * oh * ow * square < 40000, "the f16 mode's loss nears 65504"
    dy = 2 * math.sqrt(square)
    grad = dy * std_x * math.sqrt(p)
    # The f32 atol: four times the rounding of each gradient's sums,
    # 2^-24 sqrt(terms) rms (sequential accumulation): the input gradient's
    # Kb terms, the filter and bias gradients' P (the bias gradient's part
    # 2 P b, where the partial sums grow, is large: rtol covers it).
    sums = [(k_bwd, grad), (p, grad)] + ([(p, dy * math.sqrt(p))] if bias else [])
    f32_atol = max(1e-5, round_up(max(4 * 2 ** -24 * math.sqrt(terms) * rms
                                      for terms, rms in sums)))
    std_x, std_w = sig(std_x), sig(std_w)
    args = [f'%x: {tensor(xs)} {{kiln.param = #kiln.init<normal, std = {std_x}>, kiln.name = "x"}}',
            f'%w: {tensor(ws)} {{kiln.param = #kiln.init<normal, std = {std_w}>, kiln.name = "w"}}']
    if bias:
        args.append(f'%b: {tensor([o])} {{kiln.param = #kiln.init<normal, std = {BIAS_STD}>, kiln.name = "b"}}')
    args.append(f'%t: {tensor(ys)} {{kiln.name = "t"}}')
    body = [conv_line(layout, xs, ws, bias, stride, padding, dilation, groups),
            f"%loss = kiln.mse_loss %y, %t reduction = sum : {tensor(ys)}"]
    header = [describe(layout, n, c, h, w, o, k, stride, padding, dilation, groups, oh, ow)
              + (", bias" if bias else ", no bias") + "; summed MSE loss, x, w"
              + (" and b" if bias else "") + " parameters.",
              f"// gpu-tolerance: 1e-4 {short(f32_atol)}",
              f"// gpu-tf32-tolerance: {TF32_TOLERANCE}",
              f"// gpu-bf16-tolerance: {BF16_TOLERANCE}",
              f"// gpu-f16-tolerance: {F16_TOLERANCE}",
              "// gpu-init-params"]
    return "\n".join(header + function(args, "tensor<f32>", body))


def epilogue_model(layout, n, c, h, w, o, k, stride, padding, epilogue):
    kh, kw = k
    oh = out_size(h, padding[0], padding[1], 1, kh, stride[0])
    ow = out_size(w, padding[2], padding[3], 1, kw, stride[1])
    xs, ws, ys = shapes(layout, n, c, h, w, o, kh, kw, oh, ow, 1)
    # x is uniform in [-1, 1) (rms 1/sqrt(3)): the output is of order one.
    std_w = sig(math.sqrt(3 / (c * kh * kw)))
    args = [f'%x: {tensor(xs)} {{kiln.name = "x"}}',
            f'%w: {tensor(ws)} {{kiln.param = #kiln.init<normal, std = {std_w}>, kiln.name = "w"}}',
            f'%b: {tensor([o])} {{kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"}}']
    body = [conv_line(layout, xs, ws, True, stride, padding, (1, 1), 1)]
    result_type, tolerance = tensor(ys), "1e-4 1e-5"
    if epilogue == "relu":
        what = "bias + relu"
        body.append(f"%z = kiln.relu %y : {tensor(ys)}")
    elif epilogue == "residual":
        what = "bias + residual, relu"
        args.append(f'%r: {tensor(ys)} {{kiln.name = "r"}}')
        body.append(f"%s = kiln.add %y, %r : {tensor(ys)}, {tensor(ys)}")
        body.append(f"%z = kiln.relu %s : {tensor(ys)}")
    else:
        # The GPU rounds the f32 result to bf16 once; kiln-ref in f64 rounds
        # the exact one: one bf16 step apart at most.
        what = "bias, cast to bf16"
        result_type, tolerance = tensor(ys, "bf16"), "1e-2 1e-4"
        body.append(f"%z = kiln.cast %y : {tensor(ys)} to {result_type}")
    header = [describe(layout, n, c, h, w, o, k, stride, padding, (1, 1), 1, oh, ow)
              + f"; {what}: the epilogue a convolution kernel may fuse.",
              "// gpu-modes: inference",
              f"// gpu-tolerance: {tolerance}",
              "// gpu-init-params"]
    return "\n".join(header + function(args, result_type, body))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {}
    for name, *case in CASES:
        for layout in LAYOUTS:
            models[f"{name}_{layout}"] = training_model(layout, *case)
    for name, *case in EPILOGUE_CASES:
        for layout in LAYOUTS:
            models[f"{name}_{layout}"] = epilogue_model(layout, *case)
    for name, text in models.items():
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
