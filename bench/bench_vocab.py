"""Over a vocabulary: the embedding's backward (a scatter-add of 16384
lookups into a [32768, 1024] table) and cross entropy over 32768 classes
(forward and backward, and the memory each side needs)."""

import os
import re
import traceback

from bench_harness import (HERE, MODES, Row, fmt_ms, kiln_outputs, load_torch,
                           safetensors_entry, time_events, time_kiln,
                           torch_inference_call, torch_tensor,
                           write_safetensors)


def embedding_inputs(name, b, t, v, d, workdir):
    """The bundle's inputs, else drawn here (seed 1: g uniform in [-1, 1) in
    bf16, tokens uniform in [0, v)) and written for kiln-run."""
    import torch
    path = os.path.join(HERE, f"{name}.inputs.safetensors")
    if os.path.exists(path):
        return path, "inputs drawn by kiln-ref (seed 1)"
    path = os.path.join(workdir, f"{name}.inputs.safetensors")
    gen = torch.Generator(device="cuda").manual_seed(1)
    g = (torch.rand([b, t, d], generator=gen, device="cuda") * 2 - 1).bfloat16()
    tokens = torch.randint(0, v, [b, t], generator=gen, device="cuda",
                           dtype=torch.int32)
    tensors = {"g": safetensors_entry(g), "tokens": safetensors_entry(tokens)}
    write_safetensors(path, tensors, {"kiln.function": "f"})
    return path, "inputs drawn by torch on the GPU (seed 1)"


def torch_embedding_backward(data, v, mode):
    """The table's gradient as autograd computes it for F.embedding
    (aten.embedding_dense_backward: no padding index, no frequency
    scaling), on the same int32 tokens."""
    import torch

    def f(g, tokens):
        return torch.ops.aten.embedding_dense_backward(g, tokens, v, -1, False)
    return torch_inference_call(f, mode, data["g"], data["tokens"])


def embedding_check_note(rel_l2, nonfinite, identical, limit=1e-2):
    """(ok, note) of kiln's table gradient against the f64 reference:
    relative L2 error under `limit` (bf16 outputs), every element finite,
    and two runs bit for bit the same."""
    ok = nonfinite == 0 and rel_l2 < limit and identical
    note = (f"kiln's dtable vs the same sums in f64 (torch, on the GPU): "
            f"rel L2 err {rel_l2:.2e}, {nonfinite} non-finite; two runs "
            f"{'bitwise identical' if identical else 'DIFFER'}: "
            f"{'ok' if ok else 'FAILED'}")
    return ok, note


def check_embedding(artifact, inputs, data, v, workdir):
    """Runs the artifact twice (kiln-run --output), requires the same bits,
    and compares dtable with index_add of g into a zero table in f64."""
    import torch
    outputs = []
    for run in range(2):
        out, error = kiln_outputs(artifact, "forward", inputs, os.path.join(
            workdir, f"kiln_embedding_output{run}.safetensors"))
        if error:
            return False, error
        outputs.append(out["dtable"])
    identical = outputs[0][2] == outputs[1][2]
    y = torch_tensor(outputs[0]).double()
    g, tokens = data["g"], data["tokens"]
    ref = torch.zeros([v, g.shape[-1]], dtype=torch.float64, device="cuda")
    ref.index_add_(0, tokens.reshape(-1).long(), g.reshape(-1, g.shape[-1]).double())
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    rel = float(diff.norm() / ref.norm())
    return embedding_check_note(rel, nonfinite, identical)


def run_embedding(args, title, name, b, t, v, d):
    import torch
    inputs, how = embedding_inputs(name, b, t, v, d, args.workdir)
    artifact = os.path.join(HERE, f"{name}.kiln")
    data = load_torch(inputs)
    ok, check = check_embedding(artifact, inputs, data, v, args.workdir)
    print(check, flush=True)
    ms, note = time_kiln(artifact, "forward", inputs, None, args.warmup,
                         args.iters)
    rows = [Row("kiln", ms, note, torch=False)]
    # The bytes any implementation moves: g read once, every table row
    # written (the tokens are negligible).
    moved = 2.0 * b * t * d + 2.0 * v * d
    for label, mode in MODES:
        try:
            fn = torch_embedding_backward(data, v, mode)
            t_ms = time_events(fn, max(args.warmup, 3), args.iters)
            rows.append(Row(label, t_ms, f"{moved / t_ms / 1e6:.0f} GB/s"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {type(e).__name__}"))
        torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    if rows[0].ms:
        rows[0].note += f"; {moved / rows[0].ms / 1e6:.0f} GB/s"
    return rows, [how, check if ok else "**" + check + "**"]


def kiln_entry_arena(name, entry):
    """The arena bytes of `entry` in kilnc's --stats of the bundle."""
    path = os.path.join(HERE, f"{name}.stats")
    if not os.path.exists(path):
        return None
    m = re.search(rf"entry {entry}: \d+ launches, arena (\d+) bytes", open(path).read())
    return int(m.group(1)) if m else None


def torch_cross_entropy(logits, labels, mode):
    """Forward and backward of F.cross_entropy (mean) on bf16 logits that
    require a gradient; each call drops the previous gradient first."""
    import torch
    import torch.nn.functional as F

    def f(x, y):
        return F.cross_entropy(x, y)
    if mode is not None:
        torch._dynamo.reset()
        f = torch.compile(f, mode=mode)
    graphs = mode == "reduce-overhead"

    def call():
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        logits.grad = None
        f(logits, labels).backward()
    return call


def peak_extra_bytes(fn, release):
    """Device memory one call allocates beyond what was live before it, at
    its peak (the gradient included); `release` frees what a call leaves."""
    import torch
    fn()
    release()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def run_cross_entropy(args, title, name, n, v):
    import torch
    inputs = os.path.join(HERE, f"{name}.inputs.safetensors")
    artifact = os.path.join(HERE, f"{name}.kiln")
    ms, note = time_kiln(artifact, "forward_backward", inputs, None,
                         args.warmup, args.iters)
    # kiln's memory beyond the logits: the step's arena and the gradient.
    arena = kiln_entry_arena(name, "forward_backward")
    grad_bytes = 2 * n * v
    mib = 1024.0 * 1024.0
    if arena is not None:
        note += f"; peak +{(arena + grad_bytes) / mib:.0f} MiB (gradient + arena {arena / 1024:.0f} KiB)"
    rows = [Row("kiln", ms, note, torch=False)]
    labels = load_torch(inputs)["labels"].long()
    gen = torch.Generator(device="cuda").manual_seed(1)
    logits = (torch.randn([n, v], generator=gen, device="cuda") * 2).bfloat16()
    logits.requires_grad_(True)
    moved = 2.0 * 2 * n * v  # the logits read once, the gradient written once
    for label, mode in MODES:
        try:
            fn = torch_cross_entropy(logits, labels, mode)
            t_ms = time_events(fn, max(args.warmup, 3), args.iters)
            extra = peak_extra_bytes(fn, lambda: setattr(logits, "grad", None))
            rows.append(Row(label, t_ms, f"{moved / t_ms / 1e9:.2f} TB/s; "
                            f"peak +{extra / mib:.0f} MiB"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {type(e).__name__}"))
        logits.grad = None
        torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    if rows[0].ms:
        rows[0].note += f"; {moved / rows[0].ms / 1e9:.2f} TB/s"
    how = ("kiln's logits drawn by its initialiser on the GPU (normal, std 2), "
           "torch's by torch (normal, std 2), the same labels (kiln-ref, seed 1); "
           "the numerics of this kernel are checked by tests/ops "
           "(cross_entropy_wide, cross_entropy_long_rows)")
    return rows, [how]


def self_test():
    ok, note = embedding_check_note(2e-3, 0, True)
    assert ok and note.endswith(": ok") and "bitwise identical" in note, note
    assert not embedding_check_note(2e-3, 0, False)[0]
    assert not embedding_check_note(2e-3, 3, True)[0]
    assert not embedding_check_note(float("nan"), 0, True)[0]
