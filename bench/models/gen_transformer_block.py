#!/usr/bin/env python3
"""Writes the transformer-block model of the benchmarks,
bench/models/transformer_block_b8t1024c1024.mlir: samples/sine_block.mlir's
pre-norm block at B8 T1024 C1024 with 16 heads of 64 (bench/bench_transformer.py's
BLOCK_SHAPE), causal, trained in bf16 with f32 master weights and AdamW
(kilnc --train=adamw --precision=bf16).

    python3 bench/models/gen_transformer_block.py [--check] [--out DIR]

--check compares the file with what it would write and exits 1 when it
differs (or is missing) instead of writing it.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import bench_transformer as transformer  # noqa: E402  bench/bench_transformer.py: the shape
import model_files  # noqa: E402


def model():
    b, t, c, h = (transformer.BLOCK_SHAPE[k] for k in ("B", "T", "C", "H"))
    d, f = c // h, 4 * c

    def ten(*shape):
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    def uniform(fan_in):
        bound = f"{1.0 / fan_in ** 0.5:.6e}"
        return f"#kiln.init<uniform, low = -{bound}, high = {bound}>"

    params = [("w_in", ten(1, c), uniform(1)), ("b_in", ten(c), uniform(1)),
              ("norm_attn", ten(c), "#kiln.init<ones>"),
              ("w_q", ten(c, c), uniform(c)), ("w_k", ten(c, c), uniform(c)),
              ("w_v", ten(c, c), uniform(c)), ("w_o", ten(c, c), uniform(c)),
              ("norm_mlp", ten(c), "#kiln.init<ones>"),
              ("w_up", ten(c, f), uniform(c)), ("b_up", ten(f), uniform(c)),
              ("w_down", ten(f, c), uniform(f)), ("b_down", ten(c), uniform(f)),
              ("norm_out", ten(c), "#kiln.init<ones>"),
              ("w_out", ten(c, 1), uniform(c)), ("b_out", ten(1), uniform(c))]
    act, heads, hd = ten(b, t, c), ten(b, t, h, d), ten(b, h, t, d)
    args = [f'    %{n}: {ty} {{kiln.param = {init}, kiln.name = "{n}"}}'
            for n, ty, init in params]
    args += [f'    %x: {ten(b, t, 1)} {{kiln.name = "x"}}',
             f'    %y: {ten(b, t, 1)} {{kiln.name = "y"}}']
    lines = [
        f"// One pre-norm transformer block, B{b} T{t} C{c}, {h} heads of {d}: Linear 1->{c}",
        f"// -> [RMSNorm -> causal self-attention with RoPE] (+residual) -> [RMSNorm",
        f"// -> Linear {c}->{f} -> GELU(tanh) -> Linear {f}->{c}] (+residual) -> RMSNorm",
        f"// -> Linear {c}->1 -> MSE. Written by bench/models/gen_transformer_block.py;",
        "// bench/run.py times its train_step (kilnc --train=adamw --precision=bf16)",
        "// against the same block in PyTorch (bf16 autocast, f32 weights, AdamW).",
        "func.func @loss(", ",\n".join(args) + ") -> tensor<f32> {",
        f"  %e0 = kiln.matmul %x, %w_in : {ten(b, t, 1)}, {ten(1, c)}",
        f"  %h = kiln.add %e0, %b_in : {act}, {ten(c)}",
        f"  %a = kiln.rms_norm %h, %norm_attn eps = 1.0e-05 : {act}, {ten(c)}",
    ]
    for n in "qkv":
        lines.append(f"  %{n}0 = kiln.matmul %a, %w_{n} : {act}, {ten(c, c)}")
        lines.append(f"  %{n}1 = kiln.reshape %{n}0 : {act} -> {heads}")
    lines += [
        f"  %q2 = kiln.rope %q1 : {heads}",
        f"  %k2 = kiln.rope %k1 : {heads}",
        f"  %q = kiln.transpose %q2 perm = [0, 2, 1, 3] : {heads}",
        f"  %k = kiln.transpose %k2 perm = [0, 2, 1, 3] : {heads}",
        f"  %v = kiln.transpose %v1 perm = [0, 2, 1, 3] : {heads}",
        f"  %o0 = kiln.attention %q, %k, %v causal : {hd}, {hd}, {hd}",
        f"  %o1 = kiln.transpose %o0 perm = [0, 2, 1, 3] : {hd}",
        f"  %o2 = kiln.reshape %o1 : {heads} -> {act}",
        f"  %o = kiln.matmul %o2, %w_o : {act}, {ten(c, c)}",
        f"  %h1 = kiln.add %h, %o : {act}, {act}",
        f"  %m = kiln.rms_norm %h1, %norm_mlp eps = 1.0e-05 : {act}, {ten(c)}",
        f"  %u0 = kiln.matmul %m, %w_up : {act}, {ten(c, f)}",
        f"  %u1 = kiln.add %u0, %b_up : {ten(b, t, f)}, {ten(f)}",
        f"  %u = kiln.gelu %u1 approximate = tanh : {ten(b, t, f)}",
        f"  %d0 = kiln.matmul %u, %w_down : {ten(b, t, f)}, {ten(f, c)}",
        f"  %d = kiln.add %d0, %b_down : {act}, {ten(c)}",
        f"  %h2 = kiln.add %h1, %d : {act}, {act}",
        f"  %n = kiln.rms_norm %h2, %norm_out eps = 1.0e-05 : {act}, {ten(c)}",
        f"  %p0 = kiln.matmul %n, %w_out : {act}, {ten(c, 1)}",
        f"  %p = kiln.add %p0, %b_out : {ten(b, t, 1)}, {ten(1)}",
        f"  %loss = kiln.mse_loss %p, %y reduction = mean : {ten(b, t, 1)}",
        "  return %loss : tensor<f32>",
        "}",
    ]
    return "\n".join(lines) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=HERE, help="directory (default: bench/models)")
    p.add_argument("--check", action="store_true",
                   help="compare instead of writing; exit 1 on a difference")
    args = p.parse_args(argv)
    path = os.path.join(args.out, transformer.block_model_name() + ".mlir")
    return model_files.write_or_check({path: model()}, args.check,
                                      "gen_transformer_block.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
