#!/usr/bin/env python3
"""Writes the attention-kernel check models into a folder.

The GPU check of kiln.attention's kernels: on the H200 the bf16 and f16
problems run on the tensor-core kernels (kernels/attention_wgmma_*.cuh), f32
ones on the SIMT kernels. `SEED=N tests/gpu/attention/make_bundle.sh [DIR]`
(default .gpu-bundle/attention) compiles every model written here with kilnc
(tests/ops/make_gpu_cases.sh), draws its arguments and computes kiln-ref's
f64 outputs of the entry it checks; on the GPU machine `DIR/run_gpu_cases.sh
DIR LOGDIR` compares the GPU's outputs with them element by element.

Training cases (bf16 adamw and f16 adamw: forward_backward, the loss and
the gradients of q, k and v): a summed MSE loss over one kiln.attention
whose q, k and v are parameters, over every head dim the tensor-core kernels
plan differently (32 and 96 padded to whole 64-element panels, 64, 128, 256,
and a value head dim unlike the query's), causal and not, Tq < Tk (the mask
aligned to the ends), lengths that leave partial tiles and one of whole
tiles; and f32 sgd on two of them (the
SIMT kernels). Inference cases (`// gpu-modes: inference`, the forward
entry): the same shapes with bf16 and f16 tensors.

Tolerances against f64 of the same module (|out - ref| <= atol + rtol |ref|,
atol relative to each output's largest magnitude): bf16 rtol 5e-2, atol
1.5e-2; f16 rtol 1e-2, atol 3e-3 (the probabilities and the score gradients
are rounded to the storage type for the tensor cores, as in
FlashAttention).
    gen_models.py OUT_DIR
"""
import os
import sys

# name, B, H, Tq, Tk, D, DV, causal
CASES = [
    ("d64_causal", 2, 3, 150, 150, 64, 64, True),
    ("d64_cross", 2, 3, 70, 200, 64, 64, False),
    ("d128_causal_cross", 1, 4, 90, 300, 128, 128, True),
    ("d128_whole_tiles", 2, 2, 256, 256, 128, 128, False),
    ("d256_causal", 1, 2, 130, 130, 256, 256, True),
    ("d256_cross", 1, 2, 40, 100, 256, 256, False),
    ("d192_causal_cross", 1, 2, 70, 150, 192, 192, True),
    ("d96_dv32_causal", 1, 3, 77, 77, 96, 32, True),
    ("d32", 2, 2, 100, 100, 32, 32, False),
]
F32_CASES = ("d64_causal", "d128_causal_cross")
BF16_TOLERANCE = "5e-2 1.5e-2"
F16_TOLERANCE = "1e-2 3e-3"


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def training(name, b, h, tq, tk, d, dv, causal, modes):
    q, k, v = tensor([b, h, tq, d]), tensor([b, h, tk, d]), tensor([b, h, tk, dv])
    o = tensor([b, h, tq, dv])
    mask = " causal" if causal else ""
    return f"""// kiln.attention {name}: gradients of q, k and v.
// gpu-modes: {modes}
// gpu-bf16-tolerance: {BF16_TOLERANCE}
// gpu-f16-tolerance: {F16_TOLERANCE}
func.func @loss(
    %q: {q} {{kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "q"}},
    %k: {k} {{kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "k"}},
    %v: {v} {{kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "v"}},
    %t: {o} {{kiln.name = "t"}}) -> tensor<f32> {{
  %y = kiln.attention %q, %k, %v{mask} : {q}, {k}, {v}
  %loss = kiln.mse_loss %y, %t reduction = sum : {o}
  return %loss : tensor<f32>
}}
"""


def inference(name, b, h, tq, tk, d, dv, causal, dtype):
    q, k, v = (tensor([b, h, tq, d], dtype), tensor([b, h, tk, d], dtype),
               tensor([b, h, tk, dv], dtype))
    o = tensor([b, h, tq, dv], dtype)
    mask = " causal" if causal else ""
    return f"""// kiln.attention {name} forward in {dtype}.
// gpu-modes: inference
// gpu-tolerance: {BF16_TOLERANCE if dtype == "bf16" else F16_TOLERANCE}
func.func @loss(%q: {q} {{kiln.name = "q"}}, %k: {k} {{kiln.name = "k"}},
                %v: {v} {{kiln.name = "v"}}) -> ({o} {{kiln.name = "out"}}) {{
  %y = kiln.attention %q, %k, %v{mask} : {q}, {k}, {v}
  return %y : {o}
}}
"""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for case in CASES:
        name = case[0]
        modes = "bf16_adamw f16_adamw" + (" f32_sgd" if name in F32_CASES else "")
        with open(os.path.join(out, f"attn_{name}.mlir"), "w") as f:
            f.write(training(*case, modes))
        for dtype in ("bf16", "f16"):
            with open(os.path.join(out, f"attn_{name}_{dtype}_forward.mlir"), "w") as f:
                f.write(inference(*case, dtype))


if __name__ == "__main__":
    main()
