"""Transformers at size: the pre-norm block at B8 T1024 C1024 (16 heads,
causal, bf16 with f32 master weights) and the byte-level GPT sample
(samples/byte_lm.mlir), each training step against PyTorch's."""

import os
import sys
import traceback

from bench_harness import (HERE, MODES, Row, fmt_ms, kiln_artifact_or_why,
                           kiln_outputs, load_torch, safetensors_entry,
                           short_error, time_events, time_kiln, torch_tensor,
                           write_safetensors)
from bench_train import (build_model, check_loss, sine_block_module,
                         torch_train_step)

# ---------------------------------------------------------------------------
# The transformer block at size: B8 T1024 C1024, 16 heads, causal, bf16.

BLOCK_SHAPE = {"B": 8, "T": 1024, "C": 1024, "H": 16}


def block_model_name():
    return "transformer_block_b{B}t{T}c{C}".format(**BLOCK_SHAPE)


def block_factory():
    return sine_block_module(T=BLOCK_SHAPE["T"], C=BLOCK_SHAPE["C"],
                             H=BLOCK_SHAPE["H"], causal=True)


def block_params(workdir):
    """The block's parameters as its initialisers draw them (torch on the
    GPU, seed 1: uniform within 1/sqrt(fan in), norms one) and a batch x
    (uniform in [-1, 1)), y = sin(3 x), written for kiln-run (bf16
    parameters with their f32 master weights)."""
    import torch
    c, f = BLOCK_SHAPE["C"], 4 * BLOCK_SHAPE["C"]
    g = torch.Generator(device="cuda").manual_seed(1)
    shapes = {"w_in": ([1, c], 1), "b_in": ([c], 1), "w_q": ([c, c], c),
              "w_k": ([c, c], c), "w_v": ([c, c], c), "w_o": ([c, c], c),
              "w_up": ([c, f], c), "b_up": ([f], c), "w_down": ([f, c], f),
              "b_down": ([c], f), "w_out": ([c, 1], c), "b_out": ([1], c)}
    params = {k: (torch.rand(shape, generator=g, device="cuda") * 2 - 1) / fan ** 0.5
              for k, (shape, fan) in shapes.items()}
    for k in ("norm_attn", "norm_mlp", "norm_out"):
        params[k] = torch.ones(c, device="cuda")
    b, t = BLOCK_SHAPE["B"], BLOCK_SHAPE["T"]
    x = torch.rand([b, t, 1], generator=g, device="cuda") * 2 - 1
    data = {"x": x, "y": torch.sin(3 * x)}
    name = block_model_name()
    paths = {"params": os.path.join(workdir, f"{name}.params.safetensors"),
             "inputs": os.path.join(workdir, f"{name}.inputs.safetensors")}
    # kiln's bf16 parameters and their f32 master weights (the artifact's
    # "master.NAME" buffers), both from the same draw.
    tensors = {k: safetensors_entry(v.bfloat16()) for k, v in params.items()}
    tensors.update({"master." + k: safetensors_entry(v) for k, v in params.items()})
    write_safetensors(paths["params"], tensors, {"kiln.function": "loss"})
    write_safetensors(paths["inputs"], {k: safetensors_entry(v) for k, v in data.items()},
                      {"kiln.function": "loss"})
    return params, data, paths


def run_block(args, title):
    """The block's train step: kiln (bf16 storage, f32 master weights,
    AdamW) against PyTorch (bf16 autocast, f32 weights, AdamW fused and
    foreach), with kiln's loss checked against torch's in f64 at the same
    parameters and the peak device memory of both."""
    name = block_model_name()
    params, data, paths = block_params(args.workdir)
    notes = []
    artifact, why = kiln_artifact_or_why(name)
    if artifact is None:
        rows = [Row("kiln", None, why, torch=False)]
    else:
        notes += block_loss_check(args, artifact, params, data, paths)
        ms, note = time_kiln(artifact, "train_step", paths["inputs"], paths["params"],
                             args.warmup, args.iters)
        rows = [Row("kiln", ms, note, torch=False)]
        stats = os.path.join(HERE, f"{name}.stats")
        if os.path.exists(stats):
            arenas = [l.strip() for l in open(stats) if "arena" in l or "resident" in l]
            notes.append("kiln memory (kilnc --stats): " + "; ".join(arenas[:4]))
        rows += block_variant_rows(args, name, paths, notes)
    for label, mode in MODES:
        rows.append(block_torch_row(args, label, mode, params, data))
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    for path in paths.values():
        os.remove(path)
    notes.append("torch's peak: the allocator's high-water mark above what was "
                 "allocated before the model was built (weights, grads, AdamW state, "
                 "activations)")
    return rows, notes


def block_loss_check(args, artifact, params, data, paths):
    """[note] of kiln's loss (entry forward) against torch's in f64 at the
    same parameters and batch."""
    import torch
    outputs, error = kiln_outputs(artifact, "forward", paths["inputs"], os.path.join(
        args.workdir, "kiln_block_loss.safetensors"), ["--params", paths["params"]])
    model = build_model(block_factory, params).double()
    with torch.no_grad():
        ref = float(model(data["x"].double(), data["y"].double()))
    model = None
    if error:
        return ["**" + error + "**"]
    loss = float(torch_tensor(next(iter(outputs.values()))).double())
    rel = abs(loss - ref) / abs(ref)
    ok = rel < 2e-2
    text = (f"kiln's loss {loss:.6g} (bf16 storage) vs torch f64 {ref:.6g} at the "
            f"same parameters: rel err {rel:.2e} {'ok' if ok else 'MISMATCH'}")
    print(text, flush=True)
    return [text if ok else "**" + text + "**"]


# The same step compiled otherwise where the bundle has it: within the
# memory goal (437 MiB), and with the code generator's alternatives.
BLOCK_VARIANTS = (("_budget", "--memory-budget=437MiB"),
                  ("_budget_nomerge", "--memory-budget=437MiB --no-merge-launches"),
                  ("_cluster", "--gemm-cluster=auto"),
                  ("_per_item", "--persistent-attention=false"),
                  ("_fused", "--fused-attention-backward"),
                  ("_tmastore", "--gemm-tma-store"),
                  ("_attncoop", "--attention-schedule=cooperative"))


def block_variant_rows(args, name, paths, notes):
    """kiln's rows of the BLOCK_VARIANTS in the bundle (their kilnc --stats
    lines on the train step's memory appended to `notes`)."""
    rows = []
    for suffix, flags in BLOCK_VARIANTS:
        budgeted, why = kiln_artifact_or_why(name + suffix)
        if budgeted is None:
            continue
        ms, note = time_kiln(budgeted, "train_step", paths["inputs"], paths["params"],
                             args.warmup, args.iters)
        rows.append(Row("kiln " + flags, ms, note, torch=False))
        stats = os.path.join(HERE, f"{name}{suffix}.stats")
        if os.path.exists(stats):
            lines = [l.strip() for l in open(stats)
                     if "train_step" in l and ("recompute" in l or "not met" in l
                                               or "arena" in l)]
            notes.append(f"kiln {flags} (kilnc --stats): " + "; ".join(lines))
    return rows


def block_torch_row(args, label, mode, params, data):
    """One PyTorch mode's row: the step under bf16 autocast, timed with each
    AdamW of --optimizers (the fastest reported), with its peak memory."""
    import torch
    best, parts = None, []
    for optimizer in args.optimizers:
        try:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            step = torch_train_step(block_factory, params, data, mode, optimizer,
                                    autocast=True)
            t = time_events(step, max(args.warmup, 3), args.iters)
            peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
            parts.append(f"{optimizer} {t:.3f} ms, peak {peak:.0f} MiB")
            if best is None or t < best[0]:
                best = (t, optimizer)
            step = None
        except Exception as e:
            traceback.print_exc()
            parts.append(f"{optimizer} failed: {short_error(e)}")
        torch.cuda.synchronize()
    return Row(label, best[0] if best else None, "AdamW " + "; ".join(parts))


# ---------------------------------------------------------------------------
# The byte-level GPT sample (samples/byte_lm.mlir, dropout off): tokens per
# second of its training step. The PyTorch model is compare_losses.py's
# (samples/torch/), which checks its loss against kiln-ref's in the sample's
# own comparison; here its loss at kiln's parameters is checked again.

BYTE_LM = "byte_lm"


def byte_lm_module(cfg):
    """A factory of samples/byte_lm.mlir as an nn.Module of its kiln-named
    parameters whose forward(tokens, targets) is compare_losses.torch_loss."""
    import torch
    import torch.nn as nn
    from compare_losses import torch_loss

    class ByteLm(nn.Module):
        def __init__(self):
            super().__init__()
            self.p = nn.ParameterDict({n: nn.Parameter(torch.empty(s))
                                       for n, s in cfg["params"].items()})

        def forward(self, tokens, targets):
            return torch_loss(self.p, {"tokens": tokens, "targets": targets}, cfg)

    def factory():
        return ByteLm(), {n: ("p." + n, False) for n in cfg["params"]}
    return factory


def byte_lm_step(factory, params, data, mode, optimizer, autocast):
    """torch_train_step for the language model's (tokens, targets)."""
    renamed = {"x": data["tokens"], "y": data["targets"]}
    return torch_train_step(factory, params, renamed, mode, optimizer,
                            autocast=autocast)


def run_byte_lm(args, title, precision):
    """The sample's train step (AdamW) at B32 T128: kiln against PyTorch
    (f32 without TF32, or bf16 autocast against kiln's bf16 storage with f32
    master weights), as ms per step and tokens per second."""
    import torch
    sys.path.insert(0, HERE)
    from compare_losses import parse_model
    cfg = parse_model(open(os.path.join(HERE, f"{BYTE_LM}_nodrop.mlir")).read())
    factory = byte_lm_module(cfg)
    inputs = os.path.join(HERE, f"{BYTE_LM}.inputs.safetensors")
    data = load_torch(inputs)
    params = load_torch(os.path.join(HERE, f"{BYTE_LM}.params.safetensors"))
    tokens = data["tokens"].numel()
    torch.backends.cuda.matmul.allow_tf32 = False
    notes = []
    if precision == "f32":
        ok, check = check_loss(factory, params, {"x": data["tokens"], "y": data["targets"]},
                               os.path.join(HERE, f"{BYTE_LM}.expected.safetensors"))
        notes.append(check if ok else "**" + check + "**")
    rows = [byte_lm_kiln_row(args, precision, cfg, params, inputs, tokens)]
    for label, mode in MODES:
        rows.append(byte_lm_torch_row(args, label, mode, factory, params, data,
                                      precision, tokens))
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    notes.append(f"{tokens} tokens per step (B x T); torch f32 without TF32")
    return rows, notes


def byte_lm_kiln_row(args, precision, cfg, params, inputs, tokens):
    """kiln's row: the f32 artifact on the bundle's parameters, or the bf16
    one on the same draw as bf16 parameters with f32 master weights."""
    name = BYTE_LM if precision == "f32" else f"{BYTE_LM}_bf16"
    artifact, why = kiln_artifact_or_why(name)
    if artifact is None:
        return Row("kiln", None, why, torch=False)
    params_path = os.path.join(HERE, f"{BYTE_LM}.params.safetensors")
    if precision == "bf16":
        own = {k: params[k] for k in cfg["params"]}
        tensors = {k: safetensors_entry(v.bfloat16()) for k, v in own.items()}
        tensors.update({"master." + k: safetensors_entry(v) for k, v in own.items()})
        params_path = os.path.join(args.workdir, f"{name}.params.safetensors")
        write_safetensors(params_path, tensors, {"kiln.function": "loss"})
    ms, note = time_kiln(artifact, "train_step", inputs, params_path,
                         args.warmup, args.iters)
    if ms:
        note += f"; {tokens / ms * 1e3:,.0f} tokens/s"
    return Row("kiln", ms, note, torch=False)


def byte_lm_torch_row(args, label, mode, factory, params, data, precision, tokens):
    """One PyTorch mode's row, timed with each AdamW of --optimizers (the
    fastest reported, with its tokens per second)."""
    import torch
    best, parts = None, []
    for optimizer in args.optimizers:
        try:
            step = byte_lm_step(factory, params, data, mode, optimizer,
                                autocast=precision == "bf16")
            t = time_events(step, max(args.warmup, 3), args.iters)
            parts.append(f"{optimizer} {t:.4f} ms")
            if best is None or t < best[0]:
                best = (t, optimizer)
            step = None
        except Exception as e:
            traceback.print_exc()
            parts.append(f"{optimizer} failed: {short_error(e)}")
        torch.cuda.synchronize()
    note = "AdamW " + "; ".join(parts)
    if best:
        note += f"; {tokens / best[0] * 1e3:,.0f} tokens/s"
    return Row(label, best[0] if best else None, note)
