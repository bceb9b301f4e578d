"""GEMMs: GEMM + bias + GELU at three sizes against cuBLAS through PyTorch,
and the transformer block's own products (forward, input and weight
gradients) one by one; kiln's outputs checked against f64 each time."""

import os
import traceback

from bench_harness import (HERE, MODES, Row, fmt_ms, kiln_artifact_or_why,
                           kiln_outputs, load_torch, safetensors_entry,
                           time_events, time_kiln, torch_inference_call,
                           torch_tensor, write_safetensors)
from bench_transformer import BLOCK_SHAPE


def torch_gemm(data, mode):
    import torch.nn.functional as F

    def f(x, w, b):
        return F.gelu(F.linear(x, w.t(), b), approximate="tanh")
    return torch_inference_call(f, mode, data["x"], data["w"], data["b"])


def gemm_inputs(name, m, k, n, workdir):
    """The bundle's inputs, else drawn here (Philox, seed 1, uniform in
    [-1, 1), bf16) and written for kiln-run."""
    import torch
    path = os.path.join(HERE, f"{name}.inputs.safetensors")
    if os.path.exists(path):
        return path, "inputs drawn by kiln-ref (seed 1)"
    path = os.path.join(workdir, f"{name}.inputs.safetensors")
    g = torch.Generator(device="cuda").manual_seed(1)
    tensors = {}
    for arg, shape in (("x", [m, k]), ("w", [k, n]), ("b", [n])):
        t = (torch.rand(shape, generator=g, device="cuda") * 2 - 1).bfloat16()
        tensors[arg] = safetensors_entry(t)
    write_safetensors(path, tensors, {"kiln.function": "f"})
    return path, "inputs drawn by torch on the GPU (seed 1)"


def gemm_check_note(rel_l2, max_err, nonfinite, limit=1e-2):
    """(ok, note) of kiln's GEMM output against the f64 reference: relative
    L2 error under `limit` (bf16 outputs) and every element finite."""
    ok = nonfinite == 0 and rel_l2 < limit
    note = (f"kiln's y vs the same function in f64 (torch, on the GPU): "
            f"rel L2 err {rel_l2:.2e}, max abs err {max_err:.2e} of max |y| "
            f"(relative), {nonfinite} non-finite: {'ok' if ok else 'FAILED'}")
    return ok, note


def check_gemm(artifact, inputs, data, workdir):
    """Runs the artifact once (kiln-run --output) and compares its y with
    gelu_tanh(x @ w + b) computed in f64 on the GPU."""
    import torch
    import torch.nn.functional as F
    outputs, error = kiln_outputs(artifact, "forward", inputs, os.path.join(
        workdir, "kiln_gemm_output.safetensors"))
    if error:
        return False, error
    y = torch_tensor(outputs["y"]).double()
    x, w, b = (data[key].double() for key in ("x", "w", "b"))
    ref = F.gelu(x @ w + b, approximate="tanh")
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    rel = float(diff.norm() / ref.norm())
    max_err = float(diff.abs().max() / ref.abs().max())
    return gemm_check_note(rel, max_err, nonfinite)


# The GEMM artifacts' variants (bench/make_bundle.sh): suffix, kilnc flag.
GEMM_VARIANTS = (("_cluster", "--gemm-cluster=auto"),
                 ("_tmastore", "--gemm-tma-store"),
                 ("_pingpong", "--gemm-schedule=pingpong"))


def run_gemm(args, title, name, m, k, n):
    import torch
    inputs, how = gemm_inputs(name, m, k, n, args.workdir)
    artifact = os.path.join(HERE, f"{name}.kiln")
    data = load_torch(inputs)
    ok, check = check_gemm(artifact, inputs, data, args.workdir)
    print(check, flush=True)
    ms, note = time_kiln(artifact, "forward", inputs,
                         None, args.warmup, args.iters)
    rows = [Row("kiln", ms, note, torch=False)]
    flops = 2.0 * m * k * n
    notes = []
    # The same product in thread-block clusters of two blocks that share the
    # rhs tile (TMA multicast), and with TMA stores, for comparison.
    for suffix, flag in GEMM_VARIANTS:
        variant, _ = kiln_artifact_or_why(name + suffix)
        if variant is None:
            continue
        variant_ok, variant_check = check_gemm(variant, inputs, data, args.workdir)
        print(variant_check, flush=True)
        t, note = time_kiln(variant, "forward", inputs, None, args.warmup, args.iters)
        if t:
            note += f"; {flops / t / 1e9:.0f} TFLOP/s"
        rows.append(Row("kiln " + flag, t, note, torch=False))
        notes.append(f"kiln {flag}: " + (
            variant_check if variant_ok else "**" + variant_check + "**"))
    # cuBLAS's product alone (no bias, no GELU): less work than the fused
    # kernel, the bar for its main loop.
    try:
        x, w = data["x"], data["w"]
        t = time_events(lambda: torch.matmul(x, w), max(args.warmup, 3), args.iters)
        rows.append(Row("cuBLAS x @ w alone", t, f"{flops / t / 1e9:.0f} TFLOP/s; "
                        "no bias, no GELU"))
    except Exception as e:
        traceback.print_exc()
        rows.append(Row("cuBLAS x @ w alone", None, f"failed: {type(e).__name__}"))
    for label, mode in MODES:
        try:
            t = time_events(torch_gemm(data, mode), max(args.warmup, 3), args.iters)
            rows.append(Row(label, t, f"{flops / t / 1e9:.0f} TFLOP/s"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {type(e).__name__}"))
        torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    if rows[0].ms:
        rows[0].note += f"; {flops / rows[0].ms / 1e9:.0f} TFLOP/s"
    return rows, [how, check if ok else "**" + check + "**"] + notes


# The products of the transformer block's training step (BLOCK_SHAPE) as
# plain bf16 matrix products, each against cuBLAS: (form, M, K, N, how many
# the step computes, what they are). nn: a [M, K] @ b [K, N] (forward); nt:
# a [M, K] @ b^T, b [N, K] (input gradients: dy times a weight read
# transposed); tn: a^T @ b, a [K, M], b [K, N] (weight gradients over the
# tokens).
def block_gemms():
    tokens = BLOCK_SHAPE["B"] * BLOCK_SHAPE["T"]
    c = BLOCK_SHAPE["C"]
    hidden = 4 * c
    return [
        ("nn", tokens, c, c, 4, "the q, k, v and o projections"),
        ("nn", tokens, c, hidden, 1, "the MLP's up projection"),
        ("nn", tokens, hidden, c, 1, "the MLP's down projection"),
        ("nt", tokens, c, c, 4, "the input gradients of q, k, v and o"),
        ("nt", tokens, hidden, c, 1, "the input gradient of the up projection"),
        ("nt", tokens, c, hidden, 1, "the input gradient of the down projection"),
        ("tn", c, tokens, c, 4, "the weight gradients of q, k, v and o"),
        ("tn", c, tokens, hidden, 1, "the weight gradient of the up projection"),
        ("tn", hidden, tokens, c, 1, "the weight gradient of the down projection"),
    ]


def block_gemm_name(form, m, k, n):
    return f"gemm_block_{form}_{m}x{k}x{n}"


def block_gemm_operands(form, m, k, n):
    """The stored shapes of a and b."""
    return ([k, m] if form == "tn" else [m, k]), ([n, k] if form == "nt" else [k, n])


def block_gemm_product(form, a, b):
    """y = op(a) @ op(b) in torch: views of the stored operands, as cuBLAS
    takes them (a transposed operand is a layout flag, not a copy)."""
    import torch
    return torch.matmul(a.t() if form == "tn" else a, b.t() if form == "nt" else b)


def block_gemm_inputs(name, form, m, k, n, workdir):
    """a and b drawn by torch on the GPU (Philox, seed 1, uniform in [-1, 1),
    bf16), written for kiln-run."""
    import torch
    path = os.path.join(workdir, f"{name}.inputs.safetensors")
    g = torch.Generator(device="cuda").manual_seed(1)
    tensors = {}
    for arg, shape in zip(("a", "b"), block_gemm_operands(form, m, k, n)):
        t = (torch.rand(shape, generator=g, device="cuda") * 2 - 1).bfloat16()
        tensors[arg] = safetensors_entry(t)
    write_safetensors(path, tensors, {"kiln.function": "f"})
    return path


def check_block_gemm(artifact, form, inputs, data, workdir):
    """Runs the artifact once and compares its y with the product in f64."""
    import torch
    outputs, error = kiln_outputs(artifact, "forward", inputs, os.path.join(
        workdir, "kiln_gemm_output.safetensors"))
    if error:
        return False, error
    y = torch_tensor(outputs["y"]).double()
    ref = block_gemm_product(form, data["a"].double(), data["b"].double())
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    return gemm_check_note(float(diff.norm() / ref.norm()),
                           float(diff.abs().max() / ref.abs().max()), nonfinite)


def run_block_gemm(args, title, form, m, k, n, count, what):
    """One product of the block's step: kiln (and its two-block clusters)
    against cuBLAS on the same operands."""
    import torch
    name = block_gemm_name(form, m, k, n)
    inputs = block_gemm_inputs(name, form, m, k, n, args.workdir or HERE)
    data = load_torch(inputs)
    flops = 2.0 * m * k * n
    rows, notes = [], [f"{what}; {count} per train step; inputs drawn by "
                       "torch on the GPU (seed 1)"]
    for suffix, label in (("", "kiln"),
                          *((s, "kiln " + flag) for s, flag in GEMM_VARIANTS)):
        artifact, why = kiln_artifact_or_why(name + suffix)
        if artifact is None:
            rows.append(Row(label, None, why, torch=False))
            continue
        ok, check = check_block_gemm(artifact, form, inputs, data, args.workdir or HERE)
        print(check, flush=True)
        t, note = time_kiln(artifact, "forward", inputs, None, args.warmup, args.iters)
        if t:
            note += f"; {flops / t / 1e9:.0f} TFLOP/s"
        rows.append(Row(label, t, note, torch=False))
        notes.append(f"{label}: " + (check if ok else "**" + check + "**"))
    try:
        a, b = data["a"], data["b"]
        t = time_events(lambda: block_gemm_product(form, a, b),
                        max(args.warmup, 3), args.iters)
        rows.append(Row("cuBLAS (torch.matmul)", t, f"{flops / t / 1e9:.0f} TFLOP/s"))
    except Exception as e:
        traceback.print_exc()
        rows.append(Row("cuBLAS (torch.matmul)", None, f"failed: {type(e).__name__}"))
    torch.cuda.synchronize()
    os.remove(inputs)
    return rows, notes


def block_gemm_workloads():
    """WORKLOADS entries gemm_block_<form>_<M>x<K>x<N>."""
    forms = {"nn": "forward", "nt": "input gradient", "tn": "weight gradient"}
    return [(block_gemm_name(form, m, k, n),
             f"block GEMM ({forms[form]}), bf16, {m}x{k}x{n} (MxKxN, {form})",
             "≥ 1.0x cuBLAS",
             lambda a, title, form=form, m=m, k=k, n=n, count=count, what=what:
                 run_block_gemm(a, title, form, m, k, n, count, what))
            for form, m, k, n, count, what in block_gemms()]


def self_test():
    ok, note = gemm_check_note(1.5e-3, 4e-3, 0)
    assert ok and note.endswith(": ok") and "1.50e-03" in note, note
    assert not gemm_check_note(0.2, 1.0, 0)[0]
    assert not gemm_check_note(1e-3, 1e-3, 5)[0]
    assert not gemm_check_note(float("nan"), 1.0, 0)[0]
    # The block's products: every operand pair multiplies, and the step's
    # GEMM FLOPs add up to the block's (6 per token and weight).
    flops = 0
    for form, m, k, n, count, _ in block_gemms():
        a, b = block_gemm_operands(form, m, k, n)
        ak = a[0] if form == "tn" else a[1]
        bk = b[1] if form == "nt" else b[0]
        assert ak == bk == k, (form, a, b)
        flops += 2 * m * k * n * count
    c, tokens = BLOCK_SHAPE["C"], BLOCK_SHAPE["B"] * BLOCK_SHAPE["T"]
    assert flops == 6 * tokens * (4 * c * c + 2 * 4 * c * c), flops
