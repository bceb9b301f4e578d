#!/usr/bin/env python3
"""kiln against PyTorch, side by side in one run on one GPU.

Runs on the GPU machine from inside the bundle that bench/make_bundle.sh
builds:

    python3 run.py RESULTS.md [--only NAME[,NAME]] [--warmup 20] [--iters 200]

For every workload it times kiln (kiln-run --bench: event-timed replays of the
entry's CUDA graph, median) and the same model written in PyTorch (eager,
torch.compile, torch.compile(mode="reduce-overhead")), timed the same way:
CUDA events around each of --iters back-to-back calls after --warmup calls,
median. It prints one table per workload, whose last line is the ratio
kiln / best torch (speedup = best torch / kiln), and writes them as Markdown
to RESULTS.md with the GPU, the versions, the date and the kiln commit.
The recurrent layers (--only rnn) are also timed against cuDNN and FlashRNN
(each FlashRNN backend in a process of its own, under --rnn-timeout).

    python3 run.py --self-test

checks the table, ratio, parsing and safetensors code without a GPU (and
without PyTorch);

    python3 run.py OUT.md --only rnn --dry-run [--kiln-rnn PATH]

runs the recurrent layers' PyTorch, cuDNN and FlashRNN code on the CPU at
tiny sizes (no kiln, no CUDA graphs; FlashRNN's CPU backend with
--flashrnn-backends vanilla).
"""

import argparse
import ctypes
import datetime
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# safetensors (standard library only): 8-byte little-endian header length, a
# JSON header {name: {dtype, shape, data_offsets}}, then the raw data.

DTYPE_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "BOOL": 1, "F64": 8}


def read_safetensors(path):
    """Returns {name: (dtype, shape, bytes)} (metadata dropped)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], list(info["shape"]), bytes(data[begin:end]))
    return out


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: (dtype, shape, bytes)}; tensors in name order."""
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    offset = 0
    names = sorted(tensors)
    for name in names:
        dtype, shape, data = tensors[name]
        count = 1
        for d in shape:
            count *= d
        if count * DTYPE_SIZES[dtype] != len(data):
            raise ValueError(f"{name}: {len(data)} bytes for {dtype}{shape}")
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in names:
            f.write(tensors[name][2])


# ---------------------------------------------------------------------------
# Results: parsing kiln-run, tables, ratios.

KILN_BENCH = re.compile(
    r"^bench (\S+): median ([0-9.eE+-]+) ms, min ([0-9.eE+-]+) ms, "
    r"mean ([0-9.eE+-]+) ms over (\d+) replays"
    r"(?: \(\d+ warm-up calls; (\d+) of (\d+) launches programmatic\))?", re.M)


# kiln-run --bench's memory line: the pool's high-water mark of the run.
KILN_BENCH_MEMORY = re.compile(r"^bench memory: peak (\d+) bytes in use", re.M)


def parse_kiln_bench(text):
    """kiln-run --bench's line -> {entry, median, min, mean, replays} or None."""
    m = KILN_BENCH.search(text)
    if not m:
        return None
    return {"entry": m.group(1), "median": float(m.group(2)),
            "min": float(m.group(3)), "mean": float(m.group(4)),
            "replays": int(m.group(5)),
            "programmatic": (f"{m.group(6)} of {m.group(7)} launches programmatic"
                             if m.group(6) else None)}


class Row:
    """One line of a table: a name, a median in ms (None when it failed)."""

    def __init__(self, name, ms=None, note="", torch=True):
        self.name, self.ms, self.note, self.torch = name, ms, note, torch


def best_torch(rows):
    """The fastest torch row that ran, or None."""
    ran = [r for r in rows if r.torch and r.ms is not None]
    return min(ran, key=lambda r: r.ms) if ran else None


def ratio_line(kiln_ms, best):
    """(kiln / best torch, speedup = best torch / kiln), None where unknown."""
    if kiln_ms is None or best is None or best.ms is None or kiln_ms <= 0:
        return None, None
    return kiln_ms / best.ms, best.ms / kiln_ms


def fmt_ms(ms):
    if ms is None:
        return "failed"
    return f"{ms:.4f}" if ms < 1 else f"{ms:.3f}"


def format_table(title, rows, goal=""):
    """Markdown table: kiln, then the torch rows, then kiln / best torch."""
    kiln = next((r for r in rows if not r.torch), None)
    kiln_ms = kiln.ms if kiln else None
    best = best_torch(rows)
    lines = [f"### {title}", ""]
    if goal:
        lines += [f"Goal (TARGETS.md): {goal}", ""]
    lines += ["| variant | median ms | torch / kiln | note |",
              "|---|---:|---:|---|"]
    for r in rows:
        speed = ""
        if r.torch and r.ms is not None and kiln_ms:
            speed = f"{r.ms / kiln_ms:.2f}x"
        lines.append(f"| {r.name} | {fmt_ms(r.ms)} | {speed} | {r.note} |")
    ratio, speedup = ratio_line(kiln_ms, best)
    if ratio is None:
        lines.append("| **kiln / best torch** | n/a | n/a | "
                     + ("kiln failed" if kiln_ms is None else "no torch result")
                     + " |")
    else:
        lines.append(f"| **kiln / best torch** ({best.name}) | **{ratio:.3f}** "
                     f"| **{speedup:.2f}x** | speedup = best torch / kiln |")
    return "\n".join(lines) + "\n"


def summary_line(title, rows):
    kiln = next((r for r in rows if not r.torch), None)
    best = best_torch(rows)
    ratio, speedup = ratio_line(kiln.ms if kiln else None, best)
    if ratio is None:
        return f"| {title} | {fmt_ms(kiln.ms if kiln else None)} | " \
               f"{fmt_ms(best.ms) if best else 'failed'} | n/a | n/a |"
    return (f"| {title} | {fmt_ms(kiln.ms)} | {fmt_ms(best.ms)} ({best.name}) "
            f"| {ratio:.3f} | {speedup:.2f}x |")


# ---------------------------------------------------------------------------
# Timing.

def time_kiln(artifact, entry, inputs, params, warmup, iters, extra=()):
    """Runs kiln-run --bench (with `extra` flags); returns (Row fields ms,
    note)."""
    cmd = [os.path.join(HERE, "kiln-run"), artifact, "--entry", entry,
           "--inputs", inputs, "--bench", "--warmup", str(warmup),
           "--iters", str(iters), *extra]
    if params:
        cmd += ["--params", params]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    print(text.rstrip(), flush=True)
    parsed = parse_kiln_bench(text)
    if proc.returncode != 0 or parsed is None:
        tail = " ".join(text.strip().splitlines()[-1:])[:160]
        return None, f"kiln-run exit {proc.returncode}: {tail}"
    note = (f"graph replays; min {parsed['min']:.4f} ms, "
            f"mean {parsed['mean']:.4f} ms")
    if parsed["programmatic"]:
        note += "; " + parsed["programmatic"]
    memory = KILN_BENCH_MEMORY.search(text)
    if memory:
        note += f"; peak device memory {int(memory.group(1)) / 2 ** 20:.0f} MiB"
    return parsed["median"], note


def time_events(fn, warmup, iters):
    """Median ms of `iters` back-to-back calls, each between two CUDA events
    (as kiln-run times its replays), after `warmup` calls."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


# ---------------------------------------------------------------------------
# PyTorch models.

TORCH_DTYPES = {"F32": "float32", "BF16": "bfloat16", "F16": "float16",
                "I32": "int32", "BOOL": "bool"}


def safetensors_entry(t):
    """A torch tensor as write_safetensors' (dtype, shape, bytes)."""
    import torch
    dtype = next(k for k, v in TORCH_DTYPES.items() if getattr(torch, v) == t.dtype)
    raw = t.detach().cpu().contiguous()
    return dtype, list(raw.shape), ctypes.string_at(
        raw.data_ptr(), raw.numel() * raw.element_size())


def torch_tensor(entry, device="cuda"):
    """read_safetensors' (dtype, shape, bytes) as a torch tensor on `device`."""
    import torch
    dtype, shape, data = entry
    t = torch.frombuffer(bytearray(data), dtype=getattr(torch, TORCH_DTYPES[dtype]))
    return t.reshape(shape).to(device)


def kiln_outputs(artifact, entry, inputs, path, extra=()):
    """Runs the entry once (kiln-run --output PATH, and `extra` flags);
    returns (its outputs as read_safetensors gives them, None) or (None, the
    error)."""
    cmd = [os.path.join(HERE, "kiln-run"), artifact, "--entry", entry,
           "--inputs", inputs, "--output", path, *extra]
    proc = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " ".join((proc.stdout + proc.stderr).strip().splitlines()[-1:])[:160]
        return None, f"kiln-run --output exit {proc.returncode}: {tail}"
    outputs = read_safetensors(path)
    os.remove(path)
    return outputs, None


def load_torch(path, device="cuda"):
    return {name: torch_tensor(entry, device)
            for name, entry in read_safetensors(path).items()}


def sine_block_module(**shape):
    """samples/sine_block.mlir in PyTorch: Linear 1->64, pre-norm block with
    4-head self-attention (no mask) and RoPE (rotate-half, theta 10000, [B,T,H,D]),
    GELU(tanh) MLP 64->256->64, RMSNorm, Linear 64->1, MSE. `shape` (T, C, H,
    causal) scales it: bench/models/transformer_block_*.mlir."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class SineBlock(nn.Module):
        def __init__(self, T=32, C=64, H=4, theta=10000.0, causal=False):
            super().__init__()
            self.H, self.D, self.causal = H, C // H, causal
            self.emb = nn.Linear(1, C)
            self.norm_attn = nn.RMSNorm(C, eps=1e-5)
            self.q = nn.Linear(C, C, bias=False)
            self.k = nn.Linear(C, C, bias=False)
            self.v = nn.Linear(C, C, bias=False)
            self.o = nn.Linear(C, C, bias=False)
            self.norm_mlp = nn.RMSNorm(C, eps=1e-5)
            self.up = nn.Linear(C, 4 * C)
            self.down = nn.Linear(4 * C, C)
            self.norm_out = nn.RMSNorm(C, eps=1e-5)
            self.out = nn.Linear(C, 1)
            inv = theta ** (-torch.arange(0, self.D, 2, dtype=torch.float64) / self.D)
            angle = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
            angle = torch.cat([angle, angle], dim=-1)[:, None, :]  # [T, 1, D]
            self.register_buffer("cos", angle.cos().float(), persistent=False)
            self.register_buffer("sin", angle.sin().float(), persistent=False)

        def rope(self, x):  # [B, T, H, D]
            x1, x2 = x.chunk(2, dim=-1)
            return (x * self.cos + torch.cat([-x2, x1], dim=-1) * self.sin).to(x.dtype)

        def forward(self, x, y):
            B, T, _ = x.shape
            h = self.emb(x)
            a = self.norm_attn(h)
            q = self.rope(self.q(a).view(B, T, self.H, self.D)).transpose(1, 2)
            k = self.rope(self.k(a).view(B, T, self.H, self.D)).transpose(1, 2)
            v = self.v(a).view(B, T, self.H, self.D).transpose(1, 2)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
            h = h + self.o(o.transpose(1, 2).reshape(B, T, -1))
            m = self.norm_mlp(h)
            h = h + self.down(F.gelu(self.up(m), approximate="tanh"))
            p = self.out(self.norm_out(h))
            return F.mse_loss(p.float(), y)

    # kiln parameter name -> (module attribute, is a Linear weight [in, out]).
    names = {"w_in": ("emb.weight", True), "b_in": ("emb.bias", False),
             "norm_attn": ("norm_attn.weight", False),
             "w_q": ("q.weight", True), "w_k": ("k.weight", True),
             "w_v": ("v.weight", True), "w_o": ("o.weight", True),
             "norm_mlp": ("norm_mlp.weight", False),
             "w_up": ("up.weight", True), "b_up": ("up.bias", False),
             "w_down": ("down.weight", True), "b_down": ("down.bias", False),
             "norm_out": ("norm_out.weight", False),
             "w_out": ("out.weight", True), "b_out": ("out.bias", False)}
    return SineBlock(**shape), names


def mlp_module():
    """samples/mlp.mlir in PyTorch: Linear 8->64, tanh, Linear 64->1, MSE."""
    import torch.nn as nn
    import torch.nn.functional as F

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(8, 64)
            self.l2 = nn.Linear(64, 1)

        def forward(self, x, y):
            return F.mse_loss(self.l2(self.l1(x).tanh()), y)

    names = {"w1": ("l1.weight", True), "b1": ("l1.bias", False),
             "w2": ("l2.weight", True), "b2": ("l2.bias", False)}
    return Mlp(), names


def build_model(factory, params, device="cuda"):
    """A fresh model on the GPU with the kiln parameters (weights [in, out]
    transposed into Linear's [out, in], NHWC filters permuted; build_into)."""
    model, names = factory()
    model = model.to(device)
    build_into(model, names, params)
    return model


def check_loss(factory, params, data, expected_path, device="cuda"):
    """Compares the PyTorch model's loss (f32 and f64) with kiln-ref's f64
    loss of the .mlir model at the same parameters and batch."""
    import torch
    expected = load_torch(expected_path, device)
    ref = float(next(iter(expected.values())).double().item())
    model = build_model(factory, params, device)
    with torch.no_grad():
        f32 = float(model(data["x"], data["y"]).item())
        f64 = float(model.double()(data["x"].double(), data["y"].double()).item())
    err32 = abs(f32 - ref) / max(abs(ref), 1e-30)
    err64 = abs(f64 - ref) / max(abs(ref), 1e-30)
    ok = err64 < 1e-6 and err32 < 1e-4  # the reference is rounded to f32
    text = (f"torch loss {f32:.7g} (f32), {f64:.10g} (f64) vs kiln-ref {ref:.10g}: "
            f"rel err {err32:.2e} / {err64:.2e} {'ok' if ok else 'MISMATCH'}")
    print(text, flush=True)
    return ok, text


def torch_train_step(factory, params, data, mode, optimizer, lr=1e-3,
                     autocast=False):
    """One AdamW training step (forward, backward, optimizer.step) as a
    callable; mode None (eager), "default" or "reduce-overhead"; `autocast`:
    the forward under bf16 autocast (f32 weights, bf16 products)."""
    import contextlib
    import torch
    model = build_model(factory, params)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.01,
                            fused=optimizer == "fused",
                            foreach=True if optimizer == "foreach" else None)
    x, y = data["x"], data["y"]
    if mode is None:
        forward, update = model, opt.step
    else:
        torch._dynamo.reset()
        forward = torch.compile(model, mode=mode)

        @torch.compile(mode=mode)
        def update():
            opt.step()
    graphs = mode == "reduce-overhead"

    def step():
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        with (torch.autocast("cuda", torch.bfloat16) if autocast
              else contextlib.nullcontext()):
            loss = forward(x, y)
        loss.backward()
        update()
        opt.zero_grad(set_to_none=True)
    return step


def torch_gemm(data, mode):
    import torch.nn.functional as F

    def f(x, w, b):
        return F.gelu(F.linear(x, w.t(), b), approximate="tanh")
    return torch_inference_call(f, mode, data["x"], data["w"], data["b"])


def torch_inference_call(f, mode, *args):
    """f(*args) without autograd as a callable, compiled unless mode is None
    (eager); "reduce-overhead" replays CUDA graphs."""
    import torch
    if mode is not None:
        torch._dynamo.reset()
        f = torch.compile(f, mode=mode)
    graphs = mode == "reduce-overhead"

    def call():
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            return f(*args)
    return call


# ---------------------------------------------------------------------------
# Workloads.

MODES = [("torch eager", None), ("torch.compile", "default"),
         ("torch.compile reduce-overhead", "reduce-overhead")]


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


def run_train(args, title, name, factory):
    import torch
    art = os.path.join(HERE, f"{name}.kiln")
    inputs = os.path.join(HERE, f"{name}.inputs.safetensors")
    params_path = os.path.join(HERE, f"{name}.params.safetensors")
    ms, note = time_kiln(art, "train_step", inputs, params_path, args.warmup, args.iters)
    rows = [Row("kiln", ms, note, torch=False)]
    # The same replays with every kernel launched only after its predecessor
    # has ended: what programmatic dependent launch saves.
    serial_ms, serial_note = time_kiln(art, "train_step", inputs, params_path,
                                       args.warmup, args.iters,
                                       ["--serial-launches"])
    rows.append(Row("kiln, serial launches", serial_ms, serial_note,
                    torch=False))
    params = load_torch(params_path)
    data = load_torch(inputs)
    ok, check = check_loss(factory, params, data,
                           os.path.join(HERE, f"{name}.expected.safetensors"))
    for label, mode in MODES:
        best = None
        notes = []
        for optimizer in args.optimizers:
            try:
                step = torch_train_step(factory, params, data, mode, optimizer)
                t = time_events(step, max(args.warmup, 3), args.iters)
                notes.append(f"{optimizer} {t:.4f}")
                if best is None or t < best[0]:
                    best = (t, optimizer)
            except Exception as e:  # report and go on with the other variants
                traceback.print_exc()
                notes.append(f"{optimizer} failed: {type(e).__name__}")
            torch.cuda.synchronize()
        note = "AdamW " + ", ".join(notes) + " ms"
        rows.append(Row(label, best[0] if best else None,
                        note + (f"; best {best[1]}" if best else "")))
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms ({note})", flush=True)
    return rows, [check if ok else "**" + check + "**"]


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


# ---------------------------------------------------------------------------
# Recurrent layers: kiln.rnn (FlashRNN's layouts, the input projection wx
# computed outside the layer) against the same equations in PyTorch
# (samples/torch/kiln_rnn.py), cuDNN (one head of 768) and FlashRNN.

RNN_B, RNN_T = 16, 1024
# (Gw, Gr, Gb, S) of each cell function: kiln.rnn's table.
RNN_SIZES = {"lstm": (4, 4, 4, 2), "gru": (3, 3, 4, 1),
             "elman": (1, 1, 1, 1), "slstm": (4, 4, 4, 4)}
RNN_NAMES = {"lstm": "LSTM", "gru": "GRU", "elman": "Elman", "slstm": "sLSTM"}
# The cell functions of FlashRNN's backends (its triton_fused has lstm and
# slstm only; its cuda_fused runs gru on the cuda backend).
FLASHRNN_FUNCTIONS = {"triton_fused": ("lstm", "slstm"),
                      "cuda": ("lstm", "gru", "elman", "slstm"),
                      "cuda_fused": ("lstm", "elman", "slstm"),
                      "vanilla": ("lstm", "gru", "elman", "slstm")}
# The equations in PyTorch: eager, eager replayed as one CUDA graph, the
# step under torch.compile (called T times), the same as one CUDA graph, and
# the whole sequence under torch.compile (unrolled over T: slow to compile,
# so in its own process under --rnn-timeout, and only when asked for).
RNN_TORCH_VARIANTS = {"eager": "torch eager",
                      "eager_graph": "torch eager, CUDA graph",
                      "cell": "torch.compile (per-step cell)",
                      "cell_graph": "torch.compile (per-step cell), CUDA graph",
                      "full": "torch.compile (whole sequence)"}
RNN_RESULT = "rnn result: "


def rnn_shape(args, nh, d):
    """(B, T, NH, D) run: the workload's, or tiny ones for --dry-run."""
    if args.dry_run:
        return 2, 6, min(nh, 2), 8
    return RNN_B, RNN_T, nh, d


def rnn_tensors(function, b, t, nh, d, device="cuda", dtype="bfloat16"):
    """kiln.rnn's operands drawn as FlashRNN's benchmark draws them (torch,
    seed 1): wx and b N(0, 1), r N(0, 1) / sqrt(D); s0 zeros."""
    import torch
    gw, gr, gb, s = RNN_SIZES[function]
    gen = torch.Generator(device=device).manual_seed(1)
    dt = getattr(torch, dtype)

    def normal(shape, scale=1.0):
        return (torch.randn(shape, generator=gen, device=device) * scale).to(dt)
    return {"wx": normal([b, t, gw, nh, d]), "r": normal([gr, nh, d, d], d ** -0.5),
            "b": normal([gb, nh, d]),
            "s0": torch.zeros([s, b, nh, d], device=device, dtype=dt)}


def rnn_inputs(name, tensors, workdir):
    """Writes the artifact's inputs: NAME.rnn.safetensors (wx, r, b, s0: the
    inputs of the entry rnn, and the parameters of forward_backward, whose
    only input s0 is in NAME.s0.safetensors). Returns the two paths."""
    every = os.path.join(workdir, f"{name}.rnn.safetensors")
    write_safetensors(every, {k: safetensors_entry(v) for k, v in tensors.items()},
                      {"kiln.function": "rnn"})
    s0 = os.path.join(workdir, f"{name}.s0.safetensors")
    write_safetensors(s0, {"s0": safetensors_entry(tensors["s0"])},
                      {"kiln.function": "loss"})
    return every, s0


_KILN_RNN = {}


def kiln_rnn_module(path=None):
    """samples/torch/kiln_rnn.py (rnn_forward(function, wx, r, b, s0) ->
    (states, last_states)): `path`, else the bundle's copy, else the
    checkout's (run.py run from bench/)."""
    import importlib.util
    candidates = [path] if path else [
        os.path.join(HERE, "kiln_rnn.py"),
        os.path.join(HERE, "..", "samples", "torch", "kiln_rnn.py")]
    for candidate in candidates:
        if os.path.exists(candidate):
            candidate = os.path.abspath(candidate)
            if candidate not in _KILN_RNN:
                spec = importlib.util.spec_from_file_location("kiln_rnn", candidate)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _KILN_RNN[candidate] = module
            return _KILN_RNN[candidate]
    raise FileNotFoundError("no kiln_rnn.py (samples/torch/) in the bundle or "
                            "the checkout")


def rnn_call(forward, tensors, backward):
    """One call of forward(wx, r, b, s0) -> (states, last_states) as a
    callable: without autograd, or (backward) the sum of every state after
    every step and its backward pass into wx, r and b (the previous
    gradients dropped first), as kiln's forward_backward computes."""
    import torch
    wx, r, b, s0 = (tensors[k] for k in ("wx", "r", "b", "s0"))
    if not backward:
        def call():
            with torch.no_grad():
                return forward(wx, r, b, s0)
        return call
    leaves = [t.detach().clone().requires_grad_(True) for t in (wx, r, b)]

    def call():
        for leaf in leaves:
            leaf.grad = None
        states, _ = forward(*leaves, s0)
        states.sum().backward()
    return call


def rnn_cell_loop(step):
    """forward(wx, r, b, s0) from step(wx_t, r, b, s) -> (states [S,B,1,NH,D],
    last [S,B,NH,D]) called once per time step, the states concatenated."""
    import torch

    def forward(wx, r, b, s0):
        s, outs = s0, []
        for t in range(wx.shape[1]):
            states, s = step(wx[:, t:t + 1], r, b, s)
            outs.append(states)
        return torch.cat(outs, dim=2), s
    return forward


def rnn_forward_of(rnn, function, compile_step=False, compile_all=False):
    """kiln_rnn's rnn_forward for `function`: eager, its step (a call at
    T = 1) compiled once and called T times, or compiled whole."""
    import torch

    def forward(wx, r, b, s0):
        return rnn.rnn_forward(function, wx, r, b, s0)
    if compile_step:
        torch._dynamo.reset()
        return rnn_cell_loop(torch.compile(forward))
    if compile_all:
        torch._dynamo.reset()
        return torch.compile(forward)
    return forward


def cuda_graph_call(call):
    """`call` captured once as a CUDA graph (after three calls on a side
    stream, as torch.cuda.graph asks); returns the graph's replay."""
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph.replay


def time_rnn(fn, args):
    """(median ms, calls timed): time_events with as many calls as fit in
    about --rnn-seconds (at least 5, at most --iters; the warm-up a quarter
    of them, at least 2), sized by the second call (the first compiles);
    eager recurrences take tens of milliseconds a call. --dry-run: the
    second call on the CPU clock."""
    import time
    fn()
    sync = (lambda: None) if args.dry_run else __import__("torch").cuda.synchronize
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - start
    if args.dry_run:
        return once * 1e3, 1
    iters = max(5, min(args.iters, int(args.rnn_seconds / max(once, 1e-6))))
    warmup = max(2, min(args.warmup, iters // 4))
    return time_events(fn, warmup, iters), iters


def rnn_errors(y, ref):
    """(max |y - ref| / max |ref|, relative L2 error, non-finite count)."""
    import torch
    y = y.double()
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    scale = max(float(ref.abs().max()), 1e-30)
    return (float(diff.abs().max()) / scale,
            float(diff.norm() / max(float(ref.norm()), 1e-30)), nonfinite)


def rnn_reference(rnn, function, tensors):
    """Every state of the equations (kiln_rnn.py) in f64 on the same inputs."""
    import torch
    with torch.no_grad():
        return rnn.rnn_forward(function, *(tensors[k].double()
                                           for k in ("wx", "r", "b", "s0")))[0]


def rnn_check_note(who, errors, torch_errors=None):
    """(ok, note) of `who`'s states against the f64 equations: every element
    finite and a relative L2 error under 2e-2 (bf16 states over T steps), or
    under twice that of torch eager on the bf16 inputs when larger."""
    max_err, rel, nonfinite = errors
    limit = 2e-2
    note = (f"{who}'s states vs the equations in f64 (kiln_rnn.py, on the same "
            f"inputs): max err {max_err:.2e} of max |states|, rel L2 err "
            f"{rel:.2e}, {nonfinite} non-finite")
    if torch_errors is not None:
        limit = max(limit, 2 * torch_errors[1])
        note += (f"; torch eager on the bf16 inputs: max err {torch_errors[0]:.2e}, "
                 f"rel L2 {torch_errors[1]:.2e}")
    ok = nonfinite == 0 and rel < limit
    return ok, note + f": {'ok' if ok else 'FAILED'}"


def check_rnn(artifact, inputs, tensors, function, rnn, workdir):
    """Runs the entry rnn once and compares its states with the equations in
    f64 (and, for scale, torch eager's states from the bf16 inputs: kiln_rnn.py
    computes in f32 and rounds its results to bf16)."""
    outputs, error = kiln_outputs(artifact, "rnn", inputs, os.path.join(
        workdir, "kiln_rnn_output.safetensors"))
    if error:
        return False, error
    ref = rnn_reference(rnn, function, tensors)
    eager = rnn_call(rnn_forward_of(rnn, function), tensors, False)()[0]
    return rnn_check_note("kiln", rnn_errors(torch_tensor(outputs["states"]), ref),
                          rnn_errors(eager, ref))


def cudnn_calls(function, hidden, dtype, backward, b, t, device="cuda"):
    """nn.LSTM / nn.GRU, one layer of `hidden` with input size `hidden` (as
    FlashRNN's benchmark runs it: cuDNN computes the input projection
    x @ W_ih^T itself) on x [B, T, hidden] ~ N(0, 1), without autograd or
    (backward) with the sum of every step's h and its backward pass into x
    and the weights. Returns (that call, the input projection alone with the
    same autograd)."""
    import torch
    import torch.nn.functional as F
    cls = torch.nn.LSTM if function == "lstm" else torch.nn.GRU
    layer = cls(hidden, hidden, batch_first=True).to(device=device, dtype=dtype)
    gen = torch.Generator(device=device).manual_seed(1)
    x = torch.randn([b, t, hidden], generator=gen, device=device).to(dtype)

    def projection():
        return F.linear(x, layer.weight_ih_l0, layer.bias_ih_l0)
    if not backward:
        def call():
            with torch.no_grad():
                return layer(x)

        def proj():
            with torch.no_grad():
                return projection()
        return call, proj
    x.requires_grad_(True)

    def call():
        x.grad = None
        layer.zero_grad(set_to_none=True)
        layer(x)[0].sum().backward()

    def proj():
        x.grad = None
        layer.zero_grad(set_to_none=True)
        projection().sum().backward()
    return call, proj


def runs_cudnn_rnn(call):
    """Whether one call dispatches to cuDNN's RNN (aten::_cudnn_rnn) rather
    than to PyTorch's own LSTM/GRU kernels."""
    import torch
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        call()
    return any("_cudnn_rnn" in event.key for event in prof.key_averages())


def rearrange_permutation(x, pattern, **sizes):
    """einops.rearrange for patterns that only permute axes ("a b c -> c a
    b"), all that FlashRNN's Triton backend asks of einops."""
    lhs, rhs = (side.split() for side in pattern.split("->"))
    if "(" in pattern or sorted(lhs) != sorted(rhs) or len(lhs) != len(x.shape):
        raise ValueError(f"not a permutation of {len(x.shape)} axes: {pattern!r}")
    for name, size in sizes.items():
        if x.shape[lhs.index(name)] != size:
            raise ValueError(f"{pattern!r}: {name} is {x.shape[lhs.index(name)]}, not {size}")
    return x.permute(*[lhs.index(name) for name in rhs])


def flashrnn_module():
    """FlashRNN's flashrnn() from the bundle's flashrnn/ (bench/make_bundle.sh),
    with stand-ins for einops and packaging where they are not installed;
    returns (flashrnn, notes)."""
    import types
    if not os.path.isdir(os.path.join(HERE, "flashrnn")):
        raise FileNotFoundError("FlashRNN's source is not in the bundle "
                                "(bench/make_bundle.sh, FLASHRNN_GIT)")
    notes = []
    try:
        import einops  # noqa: F401
    except ImportError:
        einops = types.ModuleType("einops")
        einops.rearrange = rearrange_permutation
        sys.modules["einops"] = einops
        notes.append("einops not installed: its permutations done by run.py")
    try:
        import packaging.version  # noqa: F401
    except ImportError:
        from setuptools._vendor import packaging  # setuptools' own copy
        sys.modules["packaging"] = packaging
        sys.modules["packaging.version"] = packaging.version
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from flashrnn import flashrnn
    return flashrnn, notes


def flashrnn_forward(flashrnn, function, backend):
    """forward(wx, r, b, s0) through FlashRNN (its own zero initial states:
    s0 is zeros), which takes kiln.rnn's layouts as they are."""
    def forward(wx, r, b, s0):
        return flashrnn(wx, r, b, states=None, function=function,
                        backend=backend, dtype=str(wx.dtype).split(".")[-1])
    return forward


def rnn_worker(spec):
    """A FlashRNN backend or the whole-sequence torch.compile in a process
    of its own: builds it, times each of spec["directions"] ("fwd",
    "fwdbwd") and prints one line RNN_RESULT + JSON {direction: {"ms",
    "note"} or {"error"}}."""
    import time
    import types
    import torch
    args = types.SimpleNamespace(**spec["timing"])
    function = spec["function"]
    b, t, nh, d = spec["shape"]
    tensors = rnn_tensors(function, b, t, nh, d, spec["device"])
    results = {}
    try:
        if spec["kind"] == "flashrnn":
            flashrnn, notes = flashrnn_module()
            forward = flashrnn_forward(flashrnn, function, spec["backend"])
        else:
            notes = []
            forward = rnn_forward_of(kiln_rnn_module(spec["kiln_rnn"]), function,
                                     compile_all=True)
    except Exception as e:
        traceback.print_exc()
        results = {k: {"error": short_error(e)} for k in spec["directions"]}
        forward = None
    for direction in spec["directions"] if forward else []:
        if results:
            failed = next(iter(results.values())).get("error")
            if failed:
                results[direction] = {"error": failed + " (in the forward pass)"}
                continue
        try:
            call = rnn_call(forward, tensors, direction == "fwdbwd")
            start = time.perf_counter()
            out = call()
            if not args.dry_run:
                torch.cuda.synchronize()
            first = time.perf_counter() - start
            ms, iters = time_rnn(call, args)
            note = [f"{iters} calls", f"first call {first:.1f} s (builds, excluded)"] + notes
            if direction == "fwd" and spec["kind"] == "flashrnn":
                try:
                    rnn = kiln_rnn_module(spec["kiln_rnn"])
                    ok, check = rnn_check_note(
                        "FlashRNN", rnn_errors(out[0], rnn_reference(rnn, function, tensors)))
                    note.append(check.replace("FlashRNN's states vs", "states vs"))
                except Exception as e:
                    note.append(f"no check against the equations: {short_error(e)}")
            results[direction] = {"ms": ms, "note": "; ".join(note)}
        except Exception as e:
            traceback.print_exc()
            results[direction] = {"error": short_error(e)}
        out = call = None
    print(RNN_RESULT + json.dumps(results), flush=True)
    return 0


def short_error(e):
    """An exception as `Type: first line of its message` (160 characters)."""
    text = str(e).strip().splitlines()
    return (f"{type(e).__name__}: {text[0]}" if text else type(e).__name__)[:160]


def parse_rnn_result(text):
    """The worker's result line -> {direction: {...}}, or None."""
    for line in reversed(text.splitlines()):
        if line.startswith(RNN_RESULT):
            return json.loads(line[len(RNN_RESULT):])
    return None


def rnn_worker_rows(args, label, key, spec, direction):
    """The worker's row for `direction`. The worker runs once per model and
    variant (key) for every selected direction, its results kept in
    args.rnn_results; killed (its process group) after --rnn-timeout s."""
    import signal
    if key not in args.rnn_results:
        cmd = [sys.executable, os.path.abspath(__file__), "--rnn-worker",
               json.dumps(spec)]
        print("$", " ".join(cmd[:3]), f"'{cmd[3]}'", flush=True)
        proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            text, _ = proc.communicate(timeout=args.rnn_timeout)
            result = parse_rnn_result(text)
            if result is None:
                tail = " ".join(text.strip().splitlines()[-1:])[:160]
                result = {k: {"error": f"exit {proc.returncode}: {tail}"}
                          for k in spec["directions"]}
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            result = {k: {"error": f"no result within {args.rnn_timeout} s "
                          "(--rnn-timeout)"} for k in spec["directions"]}
        print("\n".join(text.rstrip().splitlines()[-40:]), flush=True)
        args.rnn_results[key] = result
    result = args.rnn_results[key].get(direction, {"error": "not run"})
    if "error" in result:
        return Row(label, None, f"did not build/run: {result['error']}")
    return Row(label, result["ms"], result["note"])


def rnn_directions(args, function, nh, d):
    """The directions of this model that the run selects (a worker times
    them all at once)."""
    return [k for k in ("fwd", "fwdbwd")
            if selected(f"rnn_{function}_{nh}x{d}_{k}", args.only)]


def run_rnn(args, title, function, nh, d, backward, goal_ms):
    import torch
    name = f"rnn_{function}_{nh}x{d}"
    direction = "fwdbwd" if backward else "fwd"
    b, t, nh_run, d_run = rnn_shape(args, nh, d)
    device = "cpu" if args.dry_run else "cuda"
    tensors = rnn_tensors(function, b, t, nh_run, d_run, device)
    notes = [] if not args.dry_run else [
        f"dry run on the CPU at B{b} T{t} {nh_run}x{d_run}: no kiln, no CUDA graphs"]
    try:
        rnn, rnn_error = kiln_rnn_module(args.kiln_rnn), None
    except Exception as e:
        rnn, rnn_error = None, short_error(e)

    # kiln: the entry rnn, or forward_backward (wx, r, b loaded as its
    # parameters).
    artifact = os.path.join(HERE, f"{name}.kiln")
    failed_compile = os.path.join(HERE, f"{name}.kilnc-error")
    if not os.path.exists(artifact):
        why = f"no {name}.kiln in the bundle"
        if os.path.exists(failed_compile):
            lines = [l for l in open(failed_compile).read().splitlines() if "error" in l]
            why = "kilnc failed: " + (lines[0] if lines else f"see {name}.kilnc-error")[:200]
        ms, note = None, why
    elif args.dry_run:
        ms, note = None, "not run (dry run)"
    else:
        every, s0 = rnn_inputs(name, tensors, args.workdir)
        if backward:
            ms, note = time_kiln(artifact, "forward_backward", s0, every,
                                 args.warmup, args.iters)
        else:
            if rnn is None:
                ok, check = False, f"no check against the equations: {rnn_error}"
            else:
                ok, check = check_rnn(artifact, every, tensors, function, rnn,
                                      args.workdir)
            print(check, flush=True)
            notes.append(check if ok else "**" + check + "**")
            ms, note = time_kiln(artifact, "rnn", every, None, args.warmup, args.iters)
            if ms is not None:
                note += "; states " + ("agree" if ok else "DISAGREE") + " (below)"
    rows = [Row("kiln", ms, note, torch=False)]

    def timed(label, make, note=""):
        fn = None
        try:
            fn = make()
            t_ms, iters = time_rnn(fn, args)
            row = Row(label, t_ms, "; ".join(filter(None, [f"{iters} calls", note])))
        except Exception as e:
            traceback.print_exc()
            row = Row(label, None, f"failed: {short_error(e)}")
        fn = None
        if not args.dry_run:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        print(f"{title}: {row.name}: {fmt_ms(row.ms)} ms {row.note}", flush=True)
        rows.append(row)
        return row

    # (a) The equations in PyTorch (the compiled step built once, for both
    # of its variants).
    compiled = {}

    def forward_of(key):
        if not key.startswith("cell"):
            return rnn_forward_of(rnn, function)
        if "step" not in compiled:
            compiled["step"] = rnn_forward_of(rnn, function, compile_step=True)
        return compiled["step"]
    for key in args.rnn_torch:
        label = RNN_TORCH_VARIANTS[key]
        if rnn is None:
            rows.append(Row(label, None, f"failed: {rnn_error}"))
        elif key == "full":
            spec = rnn_worker_spec(args, "compile", function, nh, d, None)
            rows.append(rnn_worker_rows(args, label, (name, key), spec, direction))
        elif key.endswith("_graph") and args.dry_run:
            rows.append(Row(label, None, "not run (dry run: no CUDA)"))
        else:
            def make(key=key):
                call = rnn_call(forward_of(key), tensors, backward)
                return cuda_graph_call(call) if key.endswith("_graph") else call
            timed(label, make)

    # (b) cuDNN: one head, hidden 768 (the input projection included).
    if nh == 1 and function in ("lstm", "gru"):
        layer = "nn.LSTM" if function == "lstm" else "nn.GRU"
        for dtype in ("float16", "bfloat16"):
            dt = getattr(torch, dtype)
            short = "fp16" if dtype == "float16" else "bf16"
            try:
                call, proj = cudnn_calls(function, d_run, dt, backward, b, t, device)
                proj_ms, _ = time_rnn(proj, args)
                how = (f"cuDNN {torch.backends.cudnn.version()} (aten::_cudnn_rnn)"
                       if runs_cudnn_rnn(call) else "not cuDNN: PyTorch's own kernels")
                note = (f"{how}; includes the input projection "
                        f"x @ W_ih^T ([{b * t}x{d_run}] x [{d_run}x{RNN_SIZES[function][0] * d_run}]), "
                        f"alone {fmt_ms(proj_ms)} ms")
                timed(f"cuDNN {layer} {short}", lambda: call, note)
            except Exception as e:
                traceback.print_exc()
                rows.append(Row(f"cuDNN {layer} {short}", None, f"failed: {short_error(e)}"))
            call = proj = None

    # (c) FlashRNN, each backend in a process of its own.
    for backend in args.flashrnn_backends:
        if function not in FLASHRNN_FUNCTIONS.get(backend, ()):
            continue
        spec = rnn_worker_spec(args, "flashrnn", function, nh, d, backend)
        rows.append(rnn_worker_rows(args, f"FlashRNN {backend}", (name, backend),
                                    spec, direction))
        print(f"{title}: {rows[-1].name}: {fmt_ms(rows[-1].ms)} ms {rows[-1].note}",
              flush=True)

    if function == "slstm" and any(r.name.startswith("FlashRNN") for r in rows):
        notes.append("FlashRNN's sLSTM bounds its normaliser, n' = max(f n + i, 1) "
                     "(kiln.rnn: n' = f n + i): its states differ from these "
                     "equations, its work is the same")
    if goal_ms is not None:
        kiln_ms = rows[0].ms
        status = ("kiln failed" if kiln_ms is None else
                  f"kiln {fmt_ms(kiln_ms)} ms: {'met' if kiln_ms <= goal_ms else 'not met'}")
        notes.append(f"goal ≤ {goal_ms} ms (TARGETS.md): {status}")
    notes.append(RNN_TIMED_NOTE)
    return rows, notes


RNN_TIMED_NOTE = (
    "Timed: kiln, the equations in PyTorch and FlashRNN take the input "
    "projection wx [B,T,G,NH,D] precomputed (FlashRNN's benchmark); cuDNN "
    "computes it inside nn.LSTM / nn.GRU (its share timed alone in the note). "
    "fwd: no autograd; fwd+bwd: the sum of every state (cuDNN: of every step's "
    "h) and its backward pass into wx, r and b (cuDNN: x and the weights). "
    "Slow variants are timed over fewer calls (--rnn-seconds); FlashRNN's "
    "kernels and torch.compile are built before timing.")


def rnn_worker_spec(args, kind, function, nh, d, backend):
    return {"kind": kind, "function": function, "backend": backend,
            "shape": list(rnn_shape(args, nh, d)),
            "device": "cpu" if args.dry_run else "cuda",
            "directions": rnn_directions(args, function, nh, d),
            "kiln_rnn": args.kiln_rnn,
            "timing": {"warmup": args.warmup, "iters": args.iters,
                       "rnn_seconds": args.rnn_seconds, "dry_run": args.dry_run}}


# (function, heads, head dim, forward goal, forward+backward goal in ms, the
# anchors TARGETS.md has for them).
RNN_WORKLOADS = [
    ("lstm", 12, 64, 1.0, 3.0,
     "FlashRNN Triton fused fwd 1.94 ms; FlashRNN alternating 12.5 / 31.9 ms"),
    ("lstm", 1, 768, 2.0, 6.0,
     "cuDNN nn.LSTM fp16 2.16 / 6.97 ms; bf16 16.3 / 35.2 ms"),
    ("gru", 1, 768, 3.0, 8.0, "cuDNN nn.GRU bf16 12.7 / 30.9 ms"),
    ("gru", 12, 64, None, None, ""),
    ("elman", 12, 64, None, None, ""),
    ("slstm", 12, 64, 1.5, None, ""),
]


def rnn_workloads():
    """WORKLOADS entries rnn_FUNCTION_NHxD_fwd and _fwdbwd."""
    out = []
    for function, nh, d, fwd_goal, fwdbwd_goal, anchors in RNN_WORKLOADS:
        for backward, goal in ((False, fwd_goal), (True, fwdbwd_goal)):
            what = "forward + backward" if backward else "forward"
            heads = f"{nh} heads x {d}" if nh > 1 else f"one head x {d}"
            title = (f"{RNN_NAMES[function]} B{RNN_B} T{RNN_T} bf16, {heads}, {what}"
                     + (f" (goal ≤ {goal} ms)" if goal is not None else ""))
            goal_text = ""
            if goal is not None:
                goal_text = f"≤ {goal} ms" + (f" (anchors: {anchors})" if anchors else "")
            key = f"rnn_{function}_{nh}x{d}_{'fwdbwd' if backward else 'fwd'}"
            out.append((key, title, goal_text,
                        lambda a, t, f=function, n=nh, dd=d, bw=backward, g=goal:
                        run_rnn(a, t, f, n, dd, bw, g)))
    return out


# ---------------------------------------------------------------------------
# Convolutions: ResNet-50's layers at N = 32 in bf16, NHWC and NCHW (the
# conv2d anchors of TARGETS.md), kiln.conv2d and its two backward ops against
# cuDNN through torch.nn.functional.conv2d.

CONV_N = 32
# (name, kernel, stride, in channels, out channels, input size, padding, the
# anchors of TARGETS.md in ms on the H200: NHWC fwd, NHWC fwd+bwd, NCHW fwd,
# NCHW fwd+bwd, and the layer as TARGETS.md names it). Padding as in
# ResNet: 3 for 7x7, 1 for 3x3, 0 for 1x1.
CONV_LAYERS = [
    ("7x7s2_3_64_224", 7, 2, 3, 64, 224, 3, (0.229, 0.816, 0.327, 1.089),
     "stem 7x7/2, 3->64, 224²"),
    ("3x3_64_64_56", 3, 1, 64, 64, 56, 1, (0.0276, 0.170, 0.0565, 0.188),
     "3x3, 64->64, 56²"),
    ("1x1_64_256_56", 1, 1, 64, 256, 56, 0, (0.0264, 0.132, 0.0246, 0.139),
     "1x1, 64->256, 56²"),
    ("3x3s2_128_128_56", 3, 2, 128, 128, 56, 1, (0.0240, 0.127, 0.0565, 0.209),
     "3x3/2, 128->128, 56²"),
    ("3x3_256_256_14", 3, 1, 256, 256, 14, 1, (0.0216, 0.123, 0.0394, 0.206),
     "3x3, 256->256, 14²"),
    ("3x3_512_512_7", 3, 1, 512, 512, 7, 1, (0.0214, 0.236, 0.0457, 0.182),
     "3x3, 512->512, 7²"),
]
CONV_LAYOUTS = ("nhwc", "nchw")
# Direction -> (the artifact's entry, the gradients it computes). The stem
# is the network's first layer: its input gradient is not needed in
# training, so it is also timed without it (fwdbwd_nodx).
CONV_DIRECTIONS = {"fwd": ("forward", ()), "fwdbwd": ("fwdbwd", ("dx", "dw")),
                   "fwdbwd_nodx": ("fwdbwd_nodx", ("dw",))}
CONV_DIRECTION_NAMES = {"fwd": "forward", "fwdbwd": "forward + backward",
                        "fwdbwd_nodx": "forward + backward without dx"}
CONV_TORCH_VARIANTS = {"eager": "torch eager (cuDNN)",
                       "eager_graph": "torch eager, CUDA graph",
                       "compile": "torch.compile",
                       "compile_graph": "torch.compile reduce-overhead"}
CONV_GOALS = {"nhwc": "≥ 1.0x cuDNN channels_last (speedup ≥ 1.0)",
              "nchw": "≥ 1.5x cuDNN NCHW (speedup ≥ 1.5)"}


def conv_layer(name):
    """CONV_LAYERS' entry of `name` as a dict."""
    for entry in CONV_LAYERS:
        if entry[0] == name:
            keys = ("name", "k", "stride", "cin", "cout", "hw", "pad", "anchors", "what")
            return dict(zip(keys, entry))
    raise KeyError(name)


def conv_directions(layer):
    """The directions timed for a layer: fwd, fwdbwd, and for the stem (3
    input channels) fwdbwd_nodx."""
    return ["fwd", "fwdbwd"] + (["fwdbwd_nodx"] if layer["cin"] == 3 else [])


def conv_shapes(layer, layout, n=CONV_N):
    """{x, w, y} shapes in kiln's layout (NHWC: x [N,H,W,C], w [O,KH,KW,C];
    NCHW: x [N,C,H,W], w [O,C,KH,KW])."""
    k, c, o, hw = layer["k"], layer["cin"], layer["cout"], layer["hw"]
    out = (hw + 2 * layer["pad"] - k) // layer["stride"] + 1
    if layout == "nhwc":
        return {"x": [n, hw, hw, c], "w": [o, k, k, c], "y": [n, out, out, o]}
    return {"x": [n, c, hw, hw], "w": [o, c, k, k], "y": [n, o, out, out]}


def conv_run_size(args, layer):
    """(the layer as run, N): the workload's, or for --dry-run N2 and at
    most 16² (on the CPU)."""
    if not args.dry_run:
        return layer, CONV_N
    return dict(layer, hw=min(layer["hw"], 16)), 2


def conv_anchor(layer, layout, direction):
    """TARGETS.md's anchor in ms (fwdbwd_nodx: the fwd+bwd one)."""
    fwd, fwdbwd, nchw_fwd, nchw_fwdbwd = layer["anchors"]
    if layout == "nhwc":
        return fwd if direction == "fwd" else fwdbwd
    return nchw_fwd if direction == "fwd" else nchw_fwdbwd


def conv_flops(layer, layout, direction, n=CONV_N):
    """Multiply-adds x 2 of the forward pass, and of each gradient taken."""
    y = conv_shapes(layer, layout, n)["y"]
    one = 2.0 * y[0] * y[1] * y[2] * y[3] * layer["cin"] * layer["k"] ** 2
    return one * (1 + len(CONV_DIRECTIONS[direction][1]))


def conv_key(layout, name, direction):
    return f"conv_{layout}_{name}_{direction}"


def conv_model_name(layout, name):
    """bench/models' file (without .mlir) and the bundle's artifact."""
    return f"conv_{layout}_{name}"


def kiln_artifact_or_why(name, bundle=HERE):
    """(path of NAME.kiln, None), or (None, why there is none: kilnc's
    message from NAME.kilnc-error when kilnc failed on the model)."""
    artifact = os.path.join(bundle, f"{name}.kiln")
    if os.path.exists(artifact):
        return artifact, None
    failed = os.path.join(bundle, f"{name}.kilnc-error")
    if os.path.exists(failed):
        lines = [l for l in open(failed).read().splitlines() if "error" in l]
        return None, "kilnc failed: " + (lines[0] if lines else f"see {name}.kilnc-error")[:200]
    return None, f"no {name}.kiln in the bundle"


def to_torch_layout(t, layout):
    """A tensor in kiln's layout as the NCHW view torch's conv2d takes: for
    NHWC a permuted view (channels_last strides, no copy)."""
    return t.permute(0, 3, 1, 2) if layout == "nhwc" else t


def from_torch_layout(t, layout):
    """torch's NCHW-indexed tensor in kiln's layout."""
    return t.permute(0, 2, 3, 1) if layout == "nhwc" else t


def conv_data(args, layer, layout):
    """x, w, g for a model (torch on the GPU, seed 1, uniform in [-1, 1),
    bf16, in kiln's layout) and the inputs files of its entries: forward
    takes x and w, fwdbwd and fwdbwd_nodx also g. Kept for the model's next
    direction (one model at a time). --dry-run: on the CPU at
    conv_run_size, no files."""
    import torch
    name = conv_model_name(layout, layer["name"])
    cache = args.conv_cache
    if cache.get("name") != name:
        drop_conv_data(cache)
        device = "cpu" if args.dry_run else "cuda"
        if not args.dry_run:
            torch.cuda.empty_cache()
        run_layer, n = conv_run_size(args, layer)
        shapes = conv_shapes(run_layer, layout, n)
        gen = torch.Generator(device=device).manual_seed(1)
        tensors = {}
        for arg, shape in (("x", shapes["x"]), ("w", shapes["w"]), ("g", shapes["y"])):
            tensors[arg] = (torch.rand(shape, generator=gen, device=device) * 2 - 1).bfloat16()
        paths = {}
        for entry, names in (("forward", ("x", "w")), ("fwdbwd", ("x", "w", "g"))):
            if args.dry_run:
                break
            paths[entry] = os.path.join(args.workdir, f"{name}.{entry}.inputs.safetensors")
            write_safetensors(paths[entry], {k: safetensors_entry(tensors[k]) for k in names},
                              {"kiln.function": entry})
        paths["fwdbwd_nodx"] = paths.get("fwdbwd")
        cache.update(name=name, tensors=tensors, paths=paths, layer=run_layer)
    return cache


def drop_conv_data(cache):
    """Forgets conv_data's tensors and removes its inputs files."""
    for path in set(cache.get("paths", {}).values()):
        if path and os.path.exists(path):
            os.remove(path)
    cache.clear()


def output_check_note(what, errors, limit=1e-2, who="kiln"):
    """(ok, note) of `who`'s outputs against a reference in f64: `errors` is
    [(output, relative L2 error, non-finite count)]; each must stay under
    `limit` (bf16 outputs) with every element finite."""
    ok = all(nonfinite == 0 and rel < limit for _, rel, nonfinite in errors)
    parts = [f"{out} rel L2 err {rel:.2e}" + (f", {nonfinite} non-finite" if nonfinite else "")
             for out, rel, nonfinite in errors]
    return ok, f"{who}'s outputs vs {what}: {'; '.join(parts)}: {'ok' if ok else 'FAILED'}"


def rel_l2(y, ref):
    """(relative L2 error of y against ref, non-finite count of y)."""
    import torch
    y = y.double()
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    return float(diff.norm() / max(float(ref.norm()), 1e-30)), nonfinite


def conv_outputs(data, layout, direction, dtype):
    """y (and dx, dw) of conv2d and its autograd on the data in `dtype`, in
    kiln's layout."""
    import torch.nn.functional as F
    layer, t = data["layer"], data["tensors"]
    grads = CONV_DIRECTIONS[direction][1]
    x = to_torch_layout(t["x"], layout).to(dtype, copy=True).requires_grad_("dx" in grads)
    w = to_torch_layout(t["w"], layout).to(dtype, copy=True).requires_grad_("dw" in grads)
    y = F.conv2d(x, w, None, layer["stride"], layer["pad"])
    out = {"y": y.detach()}
    if grads:
        y.backward(to_torch_layout(t["g"], layout).to(dtype))
        out.update({"dx": x.grad, "dw": w.grad})
    return {k: from_torch_layout(v, layout) for k, v in out.items()
            if k == "y" or k in grads}


def conv_check(outputs, data, layout, direction, who="kiln"):
    """output_check_note of `outputs` ({y, dx, dw} in kiln's layout) against
    conv2d and its autograd in f64 on the same data."""
    import torch
    refs = conv_outputs(data, layout, direction, torch.float64)
    errors = [(k, *rel_l2(outputs[k], refs[k])) for k in refs]
    where = "the CPU" if refs["y"].device.type == "cpu" else "the GPU"
    return output_check_note(
        "conv2d " + ("and its gradients " if len(refs) > 1 else "")
        + f"in f64 (torch, on {where})", errors, who=who)


def check_conv(args, artifact, layout, direction, data):
    """Runs the direction's entry once (kiln-run --output) and compares y
    (and dx, dw) with conv2d and its autograd in f64 on the GPU."""
    entry = CONV_DIRECTIONS[direction][0]
    outputs, error = kiln_outputs(artifact, entry, data["paths"][entry], os.path.join(
        args.workdir, "kiln_conv_output.safetensors"))
    if error:
        return False, error
    return conv_check({k: torch_tensor(v) for k, v in outputs.items()}, data, layout,
                      direction)


def time_calls(fn, args):
    """time_events(fn) after max(--warmup, 3) calls; --dry-run: the median
    of 3 calls on the CPU clock."""
    if not args.dry_run:
        return time_events(fn, max(args.warmup, 3), args.iters)
    import time
    fn()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def torch_conv_call(data, layout, direction, variant):
    """One call of F.conv2d on bf16 x, w (channels_last views for NHWC,
    contiguous for NCHW): without autograd, or with autograd and y's
    backward pass of the same g into w (and x, unless fwdbwd_nodx), the
    previous gradients dropped first. `variant`: CONV_TORCH_VARIANTS."""
    import torch
    import torch.nn.functional as F
    layer, t = data["layer"], data["tensors"]
    x, w, g = (to_torch_layout(t[k], layout) for k in ("x", "w", "g"))
    if layout == "nhwc":
        assert x.is_contiguous(memory_format=torch.channels_last)
    stride, pad = layer["stride"], layer["pad"]

    def f(x, w):
        return F.conv2d(x, w, None, stride, pad)
    if variant.startswith("compile"):
        torch._dynamo.reset()
        f = torch.compile(f, mode="reduce-overhead" if variant == "compile_graph" else "default")
    marks = variant == "compile_graph"
    grads = CONV_DIRECTIONS[direction][1]
    if not grads:
        def call():
            if marks:
                torch.compiler.cudagraph_mark_step_begin()
            with torch.no_grad():
                return f(x, w)
    else:
        x = x.detach().requires_grad_("dx" in grads)
        w = w.detach().requires_grad_(True)

        def call():
            if marks:
                torch.compiler.cudagraph_mark_step_begin()
            x.grad = w.grad = None
            f(x, w).backward(g)
    return cuda_graph_call(call) if variant == "eager_graph" else call


def run_conv(args, title, layer, layout, direction):
    import torch
    torch.backends.cudnn.benchmark = True
    name = conv_model_name(layout, layer["name"])
    entry = CONV_DIRECTIONS[direction][0]
    data = conv_data(args, layer, layout)
    run_layer, n = conv_run_size(args, layer)
    flops = conv_flops(run_layer, layout, direction, n)
    notes = []
    artifact, why = kiln_artifact_or_why(name)
    if args.dry_run:
        notes.append(f"dry run on the CPU at N{n} {run_layer['hw']}²: no kiln, no CUDA graphs")
        # The check's code on torch eager's bf16 outputs.
        ok, check = conv_check(conv_outputs(data, layout, direction, torch.bfloat16),
                               data, layout, direction, who="torch eager")
        notes.append(check if ok else "**" + check + "**")
        ms, note = None, "not run (dry run)"
    elif artifact is None:
        ms, note = None, why
    else:
        ok, check = check_conv(args, artifact, layout, direction, data)
        print(check, flush=True)
        notes.append(check if ok else "**" + check + "**")
        ms, note = time_kiln(artifact, entry, data["paths"][entry], None,
                             args.warmup, args.iters)
        if ms:
            note += f"; {flops / ms / 1e9:.0f} TFLOP/s"
    rows = [Row("kiln", ms, note, torch=False)]
    # Channels last: the same kernels with the threads gathering the
    # operands instead of the TMA (kilnc --no-tma), for comparison.
    gathered, _ = kiln_artifact_or_why(name + "_notma")
    if gathered is not None and not args.dry_run:
        ok, check = check_conv(args, gathered, layout, direction, data)
        if not ok:
            notes.append("--no-tma: **" + check + "**")
        g_ms, g_note = time_kiln(gathered, entry, data["paths"][entry], None,
                                 args.warmup, args.iters)
        if g_ms:
            g_note += f"; {flops / g_ms / 1e9:.0f} TFLOP/s"
        rows.append(Row("kiln --no-tma (threads gather)", g_ms, g_note,
                        torch=False))
    for variant in args.conv_torch:
        label = CONV_TORCH_VARIANTS[variant]
        if args.dry_run and variant.endswith("_graph"):
            rows.append(Row(label, None, "not run (dry run: no CUDA)"))
            continue
        fn = None
        try:
            fn = torch_conv_call(data, layout, direction, variant)
            t = time_calls(fn, args)
            rows.append(Row(label, t, f"{flops / t / 1e9:.{1 if args.dry_run else 0}f} TFLOP/s"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {short_error(e)}"))
        fn = None
        if not args.dry_run:
            torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    memory = "channels_last" if layout == "nhwc" else "contiguous (NCHW)"
    grads = CONV_DIRECTIONS[direction][1]
    what = ("no autograd" if not grads else
            "autograd: y's backward pass of the same g into "
            + " and ".join({"dx": "x", "dw": "w"}[g] for g in grads)
            + ("" if "dx" in grads else " (x.requires_grad False)"))
    notes.append(f"x, w, g uniform in [-1, 1) in bf16 (torch, seed 1); "
                 f"torch: F.conv2d, {memory}, cudnn.benchmark"
                 + ("" if args.dry_run else f", cuDNN {torch.backends.cudnn.version()}")
                 + f", {what}; kiln: entry {entry}. "
                 f"Anchor (TARGETS.md, cuDNN on the H200): "
                 f"{fmt_ms(conv_anchor(layer, layout, direction))} ms")
    return rows, notes


def conv_workloads():
    """WORKLOADS entries conv_LAYOUT_LAYER_DIRECTION."""
    out = []
    for layout in CONV_LAYOUTS:
        for entry in CONV_LAYERS:
            layer = conv_layer(entry[0])
            for direction in conv_directions(layer):
                title = (f"conv2d {layout.upper()} {layer['what']}, N{CONV_N} bf16, "
                         f"{CONV_DIRECTION_NAMES[direction]}")
                anchor = conv_anchor(layer, layout, direction)
                goal = (f"{CONV_GOALS[layout]}; anchor {fmt_ms(anchor)} ms "
                        f"(cuDNN {'channels_last' if layout == 'nhwc' else 'NCHW'}, H200)")
                out.append((conv_key(layout, layer["name"], direction), title, goal,
                            lambda a, t, l=layer, lo=layout, d=direction:
                            run_conv(a, t, l, lo, d)))
    return out


def conv_layout_tables(results):
    """One table per layout over the conv workloads that ran (`results`:
    {key: rows}): each layer's kiln, best torch and ratio per direction,
    with TARGETS.md's anchor beside them."""
    sections = []
    for layout in CONV_LAYOUTS:
        lines = []
        for entry in CONV_LAYERS:
            layer = conv_layer(entry[0])
            for direction in conv_directions(layer):
                rows = results.get(conv_key(layout, layer["name"], direction))
                if rows is None:
                    continue
                kiln = next((r for r in rows if not r.torch), None)
                best = best_torch(rows)
                ratio, speedup = ratio_line(kiln.ms if kiln else None, best)
                lines.append(
                    f"| {layer['what']} | {CONV_DIRECTION_NAMES[direction]} "
                    f"| {fmt_ms(kiln.ms if kiln else None)} "
                    f"| {fmt_ms(best.ms) + ' (' + best.name + ')' if best else 'failed'} "
                    f"| {'n/a' if ratio is None else f'{ratio:.3f}'} "
                    f"| {'n/a' if speedup is None else f'{speedup:.2f}x'} "
                    f"| {fmt_ms(conv_anchor(layer, layout, direction))} |")
        if not lines:
            continue
        sections.append("\n".join(
            [f"### conv2d {layout.upper()}, N{CONV_N} bf16 (goal: {CONV_GOALS[layout]})", "",
             "| layer | pass | kiln ms | best torch ms | kiln / best torch | speedup "
             "| anchor ms (TARGETS.md) |",
             "|---|---|---:|---:|---:|---:|---:|"] + lines) + "\n")
    return sections


# ---------------------------------------------------------------------------
# ResNet-18, CIFAR-style (32x32 input: a 3x3 stem, no max pool), bf16 NHWC:
# kiln's train_step (kilnc --train=adamw --precision=bf16) against the same
# network in PyTorch, channels_last, AdamW.

RESNET_WIDTHS = (64, 128, 256, 512)
RESNET_BATCH = 128
RESNET_CLASSES = 10
RESNET_SIZE = 32
# The network the PyTorch model is checked by at kiln-ref's parameters
# (bench/models/resnet18_32_check.mlir, kiln-ref in f64): the same layers at
# an eighth of the width and batch 16, so that its parameters and its f64
# loss are computed on the CPU in seconds and ship in the bundle.
RESNET_CHECK_WIDTHS = (8, 16, 32, 64)
RESNET_CHECK_BATCH = 16
RESNET_PRECISIONS = {
    "master": "bf16 params, f32 master",
    "autocast": "autocast bf16, f32 params"}
RESNET_TORCH_VARIANTS = {"eager": "torch eager",
                         "eager_graph": "torch eager, CUDA graph",
                         "compile": "torch.compile",
                         "compile_graph": "torch.compile reduce-overhead"}


def resnet18_convs(widths):
    """Every convolution of the network in order, each followed by its batch
    norm: (kiln name, torch conv, torch batch norm, in, out, kernel, stride,
    padding). Stages 2-4 start with stride 2 and a 1x1 projection shortcut
    (`_down`, stride 2, with its batch norm)."""
    convs = [("conv1", "conv1", "bn1", 3, widths[0], 3, 1, 1)]
    cin = widths[0]
    for stage, cout in enumerate(widths, 1):
        for i in range(2):
            stride = 2 if stage > 1 and i == 0 else 1
            kp, tp = f"layer{stage}_{i}", f"layer{stage}.{i}"
            convs.append((f"{kp}_conv1", f"{tp}.conv1", f"{tp}.bn1", cin, cout, 3, stride, 1))
            convs.append((f"{kp}_conv2", f"{tp}.conv2", f"{tp}.bn2", cout, cout, 3, 1, 1))
            if stride != 1 or cin != cout:
                convs.append((f"{kp}_down", f"{tp}.shortcut.0", f"{tp}.shortcut.1",
                              cin, cout, 1, stride, 0))
            cin = cout
    return convs


def resnet18_names(widths):
    """kiln argument name -> (torch attribute, conversion): "conv" for NHWC
    filters [O, KH, KW, C] (torch [O, C, KH, KW]), "linear" for x @ W
    weights [in, out] (torch [out, in]), None for vectors; the batch norms'
    running statistics (kiln.state) included."""
    names = {}
    for kname, tconv, tbn, *_ in resnet18_convs(widths):
        names[f"{kname}_w"] = (f"{tconv}.weight", "conv")
        for suffix, attr in (("g", "weight"), ("b", "bias"), ("rm", "running_mean"),
                             ("rv", "running_var")):
            names[f"{kname}_bn_{suffix}"] = (f"{tbn}.{attr}", None)
    names["fc_w"] = ("fc.weight", "linear")
    names["fc_b"] = ("fc.bias", None)
    return names


def resnet18_module(widths=RESNET_WIDTHS, classes=RESNET_CLASSES):
    """bench/models/resnet18_32.mlir in PyTorch: (module, resnet18_names).
    forward(x, y) takes kiln's NHWC batch x [N, H, W, 3] (a permuted view:
    channels_last) and labels y, and returns the mean cross entropy in f32."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + self.shortcut(x))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(widths[0])
            cin = widths[0]
            for stage, cout in enumerate(widths, 1):
                stride = 1 if stage == 1 else 2
                setattr(self, f"layer{stage}", nn.Sequential(
                    BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
                cin = cout
            self.fc = nn.Linear(cin, classes)

        def forward(self, x, y):
            h = F.relu(self.bn1(self.conv1(x.permute(0, 3, 1, 2))))
            h = self.layer4(self.layer3(self.layer2(self.layer1(h))))
            logits = self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1))
            if logits.dtype in (torch.bfloat16, torch.float16):
                logits = logits.float()  # the loss in f32, as kiln returns it
            return F.cross_entropy(logits, y.long())

    return ResNet18(), resnet18_names(widths)


def resnet18_torch_init(model, seed=1):
    """Without a kiln artifact to draw them: the model's initialisers
    (bench/models/resnet18_32.mlir's #kiln.init) drawn by torch: filters
    kaiming normal, N(0, sqrt(2 / fan_in)); fc N(0, 0.02) and zeros; batch
    norms ones and zeros, running statistics zeros and ones."""
    import torch
    gen = torch.Generator(device="cpu").manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Conv2d):
                w = module.weight
                fan_in = w.shape[1] * w.shape[2] * w.shape[3]
                w.copy_(torch.randn(w.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
            elif isinstance(module, torch.nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * 0.02)
                module.bias.zero_()
            elif isinstance(module, torch.nn.BatchNorm2d):
                module.reset_parameters()


def kiln_named(model, names):
    """The model's parameters and running statistics under their kiln names,
    in kiln's layouts (the inverse of build_into)."""
    state = dict(model.named_parameters())
    state.update(model.named_buffers())
    out = {}
    for kiln_name, (attr, convert) in names.items():
        value = state[attr].detach()
        if convert == "conv":
            value = value.permute(0, 2, 3, 1)
        elif convert:
            value = value.t()
        out[kiln_name] = value.contiguous()
    return out


def kiln_initial_state(artifact, inputs, seed, workdir, names):
    """The artifact's parameters `names` (their master weights, and model
    state) as kiln-run's initialisers draw them on the GPU under `seed`
    (kiln-run --steps 0 --checkpoint): (tensors, None) or (None, the error)."""
    path = os.path.join(workdir, "kiln_resnet_init.safetensors")
    cmd = [os.path.join(HERE, "kiln-run"), artifact, "--steps", "0", "--inputs", inputs,
           "--seed", str(seed), "--checkpoint", path]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.exists(path):
        tail = " ".join((proc.stdout + proc.stderr).strip().splitlines()[-1:])[:160]
        return None, f"kiln-run --steps 0 exit {proc.returncode}: {tail}"
    wanted = set(names) | {"master." + n for n in names}
    state = {k: torch_tensor(v) for k, v in read_safetensors(path).items() if k in wanted}
    os.remove(path)
    return state, None


def f32_values(state, names):
    """The f32 value of every parameter and running statistic: the master
    weight (master.NAME) of a bf16 parameter, else the tensor, in f32."""
    return {n: state.get("master." + n, state[n]).float() for n in names if n in state}


def resnet_train_step(params, data, precision, variant, optimizer, lr=1e-3,
                      widths=RESNET_WIDTHS, device="cuda"):
    """One training step of ResNet-18 as a callable (forward, backward,
    AdamW, gradients dropped), built from f32 `params` (kiln names):
     - precision "master" (kiln's --precision=bf16): the convolutions and fc
       in bf16 (parameters, activations, gradients), f32 master weights
       that AdamW updates (the bf16 gradients widened into them first, the
       bf16 parameters rounded from them after); the batch norms' weights
       and running statistics stay f32 (cuDNN's batch norm of bf16
       activations takes f32 parameters);
     - "autocast": f32 parameters under torch.autocast(bfloat16).
    x goes in as f32 (kiln converts its f32 data inputs on entry). variant:
    RESNET_TORCH_VARIANTS ("eager_graph": the whole step captured as one
    CUDA graph, AdamW capturable)."""
    import torch
    model, names = resnet18_module(widths)
    model = model.to(device)
    build_into(model, names, params)
    model = model.to(memory_format=torch.channels_last)
    narrow = []
    if precision == "master":
        for module in model.modules():
            if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                module.to(torch.bfloat16)
        narrow = [p for p in model.parameters() if p.dtype == torch.bfloat16]
    masters = [p.detach().float().clone().requires_grad_(True) for p in narrow]
    for m in masters:
        m.grad = torch.zeros_like(m)
    wide = [p for p in model.parameters() if p.dtype == torch.float32]
    kind = {optimizer: True}  # fused=True or foreach=True
    if variant == "eager_graph":
        kind["capturable"] = True
    opt = torch.optim.AdamW(masters + wide, lr=lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01, **kind)
    x, y = data["x"], data["y"]
    master_grads = [m.grad for m in masters]

    def copy(dst, src):  # with a dtype conversion
        if hasattr(torch, "_foreach_copy_"):
            torch._foreach_copy_(dst, src)
        else:  # torch before 2.1
            for d, s in zip(dst, src):
                d.copy_(s)

    def update():
        if narrow:
            copy(master_grads, [p.grad for p in narrow])
        opt.step()
        if narrow:
            with torch.no_grad():
                copy(narrow, masters)

    forward = model
    if variant.startswith("compile"):
        torch._dynamo.reset()
        mode = "reduce-overhead" if variant == "compile_graph" else "default"
        forward = torch.compile(model, mode=mode)
        update = torch.compile(update, mode=mode)
    marks = variant == "compile_graph"

    def step():
        if marks:
            torch.compiler.cudagraph_mark_step_begin()
        if precision == "autocast":
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = forward(x, y)
        else:
            loss = forward(x.to(torch.bfloat16), y)
        loss.backward()
        update()
        for p in model.parameters():
            p.grad = None
        return loss
    if variant == "eager_graph":
        return cuda_graph_call(step)
    return step


def build_into(model, names, params):
    """Copies kiln-named tensors into the model's parameters (each must be
    there) and buffers (where given): NHWC filters ("conv") and x @ W
    weights ("linear", or True) converted to torch's layouts."""
    import torch
    parameters = dict(model.named_parameters())
    state = dict(parameters)
    state.update(model.named_buffers())
    with torch.no_grad():
        for kiln_name, (attr, convert) in names.items():
            if kiln_name not in params:
                if attr in parameters:
                    raise KeyError(f"no tensor for parameter {kiln_name} ({attr})")
                continue
            value = params[kiln_name]
            if convert == "conv":
                value = value.permute(0, 3, 1, 2)
            elif convert:
                value = value.t()
            state[attr].copy_(value)


def check_resnet_loss(name, widths, params, data, expected_path, device="cuda"):
    """check_loss for ResNet-18 at `widths` (TF32 off: f32 is f32)."""
    import torch
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        ok, text = check_loss(lambda: resnet18_module(widths), params, data,
                              expected_path, device)
    finally:
        torch.backends.cudnn.allow_tf32 = tf32
    return ok, f"{name}: {text}"


def check_resnet_small(device="cuda"):
    """The PyTorch model against kiln's at an eighth of the width, at
    kiln-ref's parameters (bench/models/resnet18_32_check.mlir): (ok, note)."""
    check = "resnet18_32_check"
    params = os.path.join(HERE, f"{check}.params.safetensors")
    if not os.path.exists(params):
        return False, (f"no {check}.params.safetensors in the bundle: the PyTorch "
                       "model is not checked")
    return check_resnet_loss(
        f"{check} (widths {'/'.join(map(str, RESNET_CHECK_WIDTHS))}, "
        f"B{RESNET_CHECK_BATCH})", RESNET_CHECK_WIDTHS, load_torch(params, device),
        load_torch(os.path.join(HERE, f"{check}.inputs.safetensors"), device),
        os.path.join(HERE, f"{check}.expected.safetensors"), device)


def run_resnet(args, title):
    import torch
    dry = args.dry_run
    device = "cpu" if dry else "cuda"
    torch.backends.cudnn.benchmark = True
    name = "resnet18_32"
    notes = []
    ok, text = check_resnet_small(device)
    notes.append(text if ok else "**" + text + "**")

    widths = RESNET_CHECK_WIDTHS if dry else RESNET_WIDTHS
    names = resnet18_names(widths)
    artifact, why = kiln_artifact_or_why(name)
    state = None
    if dry:
        # resnet18_32_check's batch and kiln-ref's parameters, else torch's.
        check = "resnet18_32_check"
        inputs = os.path.join(HERE, f"{check}.inputs.safetensors")
        if os.path.exists(inputs):
            data = load_torch(inputs, device)
            state = load_torch(os.path.join(HERE, f"{check}.params.safetensors"), device)
        else:
            gen = torch.Generator().manual_seed(1)
            data = {"x": torch.rand([RESNET_CHECK_BATCH, RESNET_SIZE, RESNET_SIZE, 3],
                                    generator=gen) * 2 - 1,
                    "y": torch.randint(0, RESNET_CLASSES, [RESNET_CHECK_BATCH],
                                       generator=gen, dtype=torch.int32)}
        notes.append(f"dry run on the CPU: widths {'/'.join(map(str, widths))}, "
                     f"B{data['x'].shape[0]}; no kiln, no CUDA graphs")
        rows = [Row("kiln", None, "not run (dry run)", torch=False)]
    else:
        inputs = os.path.join(HERE, f"{name}.inputs.safetensors")
        data = load_torch(inputs)
        if artifact is None:
            rows = [Row("kiln", None, why, torch=False)]
        else:
            extra = ["--seed", str(args.resnet_seed)]
            ms, note = time_kiln(artifact, "train_step", inputs, None, args.warmup,
                                 args.iters, extra)
            serial_ms, serial_note = time_kiln(artifact, "train_step", inputs, None,
                                               args.warmup, args.iters,
                                               extra + ["--serial-launches"])
            rows = [Row("kiln", ms, note, torch=False),
                    Row("kiln, serial launches", serial_ms, serial_note, torch=False)]
            state, error = kiln_initial_state(artifact, inputs, args.resnet_seed,
                                              args.workdir, names)
            if error:
                notes.append(f"**kiln's initial parameters not read ({error}): torch "
                             "draws its own**")
    if state is not None:
        params = f32_values(state, names)
        if dry:
            how = "parameters: kiln-ref's (resnet18_32_check.params.safetensors)"
        else:
            how = (f"parameters: kiln-run's initialisers (--seed {args.resnet_seed}, on "
                   "the GPU), copied into torch (the f32 master weights; the batch "
                   "norms' f32 running statistics)")
            expected = os.path.join(HERE, f"{name}.expected.safetensors")
            if os.path.exists(expected):
                ok, text = check_resnet_loss(f"{name} (B{RESNET_BATCH}, kiln-ref's "
                                             "initialisers vs kiln-run's)",
                                             widths, params, data, expected)
                notes.append(text if ok else "**" + text + "**")
    else:
        model, _ = resnet18_module(widths)
        resnet18_torch_init(model)
        params = {k: v.to(device) for k, v in kiln_named(model, names).items()}
        how = "parameters: torch's draws from the model's initialisers (no kiln artifact)"
    notes.append(how)
    optimizers = args.resnet_optimizers or (["foreach"] if dry else ["fused"])
    for precision in args.resnet_precisions:
        for variant in args.resnet_torch:
            label = f"{RESNET_TORCH_VARIANTS[variant]} ({RESNET_PRECISIONS[precision]})"
            if dry and variant.endswith("_graph"):
                rows.append(Row(label, None, "not run (dry run: no CUDA)"))
                continue
            best, timings, losses = None, [], []
            for optimizer in optimizers:
                step = None
                try:
                    step = resnet_train_step(params, data, precision, variant, optimizer,
                                             widths=widths, device=device)
                    if variant != "eager_graph":
                        losses.append(float(step()))
                    t = time_calls(step, args)
                    timings.append(f"{optimizer} {t:.4f}")
                    if best is None or t < best[0]:
                        best = (t, optimizer)
                except Exception as e:
                    traceback.print_exc()
                    timings.append(f"{optimizer} failed: {short_error(e)}")
                step = None
                if not dry:
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
            note = "AdamW " + ", ".join(timings) + " ms"
            if losses:
                note += f"; first step's loss {losses[0]:.4f}"
            rows.append(Row(label, best[0] if best else None,
                            note + (f"; best {best[1]}" if best else "")))
            print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms ({note})", flush=True)
    notes.append("torch: channels_last, cudnn.benchmark, AdamW lr 1e-3 betas "
                 "0.9/0.999 eps 1e-8 weight decay 0.01 on every parameter; "
                 "'bf16 params, f32 master' is what kiln's --precision=bf16 does "
                 "(bf16 storage, f32 master weights and optimizer state; the "
                 "batch norms' weights f32 in torch, bf16 with f32 masters in "
                 "kiln); kiln: train_step replays (lr 0, step 1), parameters "
                 f"drawn by kiln-run --seed {args.resnet_seed}")
    return rows, notes


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
    import torch
    name = block_model_name()
    params, data, paths = block_params(args.workdir)
    notes = []
    artifact, why = kiln_artifact_or_why(name)
    rows = []
    if artifact is None:
        rows.append(Row("kiln", None, why, torch=False))
    else:
        outputs, error = kiln_outputs(artifact, "forward", paths["inputs"], os.path.join(
            args.workdir, "kiln_block_loss.safetensors"), ["--params", paths["params"]])
        model = build_model(block_factory, params).double()
        with torch.no_grad():
            ref = float(model(data["x"].double(), data["y"].double()))
        model = None
        if error:
            notes.append("**" + error + "**")
        else:
            loss = float(torch_tensor(next(iter(outputs.values()))).double())
            rel = abs(loss - ref) / abs(ref)
            ok = rel < 2e-2
            text = (f"kiln's loss {loss:.6g} (bf16 storage) vs torch f64 {ref:.6g} at the "
                    f"same parameters: rel err {rel:.2e} {'ok' if ok else 'MISMATCH'}")
            print(text, flush=True)
            notes.append(text if ok else "**" + text + "**")
        ms, note = time_kiln(artifact, "train_step", paths["inputs"], paths["params"],
                             args.warmup, args.iters)
        rows.append(Row("kiln", ms, note, torch=False))
        stats = os.path.join(HERE, f"{name}.stats")
        if os.path.exists(stats):
            arenas = [l.strip() for l in open(stats) if "arena" in l or "resident" in l]
            notes.append("kiln memory (kilnc --stats): " + "; ".join(arenas[:4]))
        # The same step compiled within the memory goal (437 MiB).
        for suffix, flags in (("_budget", "--memory-budget=437MiB"),
                              ("_budget_nomerge", "--memory-budget=437MiB --no-merge-launches"),
                              ("_cluster", "--gemm-cluster=auto"),
                              ("_per_item", "--persistent-attention=false"),
                              ("_fused", "--fused-attention-backward"),
                              ("_tmastore", "--gemm-tma-store"),
                              ("_attncoop", "--attention-schedule=cooperative")):
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
    for label, mode in MODES:
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
        rows.append(Row(label, best[0] if best else None, "AdamW " + "; ".join(parts)))
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    for path in paths.values():
        os.remove(path)
    notes.append("torch's peak: the allocator's high-water mark above what was "
                 "allocated before the model was built (weights, grads, AdamW state, "
                 "activations)")
    return rows, notes


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
    name = BYTE_LM if precision == "f32" else f"{BYTE_LM}_bf16"
    inputs = os.path.join(HERE, f"{BYTE_LM}.inputs.safetensors")
    params_path = os.path.join(HERE, f"{BYTE_LM}.params.safetensors")
    data = load_torch(inputs)
    params = load_torch(params_path)
    tokens = data["tokens"].numel()
    torch.backends.cuda.matmul.allow_tf32 = False
    notes = []
    if precision == "f32":
        ok, check = check_loss(factory, params, {"x": data["tokens"], "y": data["targets"]},
                               os.path.join(HERE, f"{BYTE_LM}.expected.safetensors"))
        notes.append(check if ok else "**" + check + "**")
    artifact, why = kiln_artifact_or_why(name)
    rows = []
    if artifact is None:
        rows.append(Row("kiln", None, why, torch=False))
    else:
        if precision == "bf16":
            # The same draw as bf16 parameters and their f32 master weights.
            own = {k: params[k] for k in cfg["params"]}
            tensors = {k: safetensors_entry(v.bfloat16()) for k, v in own.items()}
            tensors.update({"master." + k: safetensors_entry(v) for k, v in own.items()})
            params_path = os.path.join(args.workdir, f"{name}.params.safetensors")
            write_safetensors(params_path, tensors, {"kiln.function": "loss"})
        ms, note = time_kiln(artifact, "train_step", inputs, params_path,
                             args.warmup, args.iters)
        if ms:
            note += f"; {tokens / ms * 1e3:,.0f} tokens/s"
        rows.append(Row("kiln", ms, note, torch=False))
    for label, mode in MODES:
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
        rows.append(Row(label, best[0] if best else None, note))
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    notes.append(f"{tokens} tokens per step (B x T); torch f32 without TF32")
    return rows, notes


# ---------------------------------------------------------------------------
# Attention: B8 H16 T2048 bf16, head dims 64 and 128, causal and not.

ATTENTION_B, ATTENTION_H, ATTENTION_T = 8, 16, 2048
ATTENTION_SHAPES = [(64, False), (64, True), (128, False), (128, True)]
ATTENTION_GOALS = {"fwd": "≥ 600 TFLOP/s at D128 non-causal",
                   "fwdbwd": "≥ 1.0x SDPA"}


def attention_shape(d):
    return [ATTENTION_B, ATTENTION_H, ATTENTION_T, d]


def attention_model_name(d, causal):
    return f"attention_b{ATTENTION_B}h{ATTENTION_H}t{ATTENTION_T}_d{d}" + (
        "_causal" if causal else "")


def attention_flops(d, causal, backward):
    """FlashAttention's count: 4 B H T^2 D for the forward (two products),
    2.5 times that for the backward, half of both when causal."""
    f = 4.0 * ATTENTION_B * ATTENTION_H * ATTENTION_T ** 2 * d
    f *= 3.5 if backward else 1.0
    return f / 2 if causal else f


def attention_data(args, name, d):
    """q, k, v, g (torch on the GPU, seed 1, N(0, 1), bf16) and the inputs
    files of the entries forward (q, k, v) and fwdbwd (and g)."""
    import torch
    gen = torch.Generator(device="cuda").manual_seed(1)
    tensors = {k: torch.randn(attention_shape(d), generator=gen, device="cuda").bfloat16()
               for k in ("q", "k", "v", "g")}
    paths = {}
    for entry, names in (("forward", ("q", "k", "v")), ("fwdbwd", ("q", "k", "v", "g"))):
        paths[entry] = os.path.join(args.workdir, f"{name}.{entry}.inputs.safetensors")
        write_safetensors(paths[entry], {k: safetensors_entry(tensors[k]) for k in names},
                          {"kiln.function": "f" if entry == "forward" else "fwdbwd"})
    return tensors, paths


def attention_outputs(t, causal, backward, dtype):
    """o (and dq, dk, dv for g) of SDPA and its autograd in `dtype`."""
    import torch.nn.functional as F
    q, k, v = (t[n].to(dtype, copy=True).requires_grad_(backward) for n in ("q", "k", "v"))
    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out = {"o": o.detach()}
    if backward:
        o.backward(t["g"].to(dtype))
        out.update(dq=q.grad, dk=k.grad, dv=v.grad)
    return out


def check_attention(args, artifact, entry, path, t, causal):
    """Runs the entry once (kiln-run --output) and compares its outputs with
    SDPA (and its autograd) in f64 on the GPU."""
    import torch
    outputs, error = kiln_outputs(artifact, entry, path, os.path.join(
        args.workdir, "kiln_attention_output.safetensors"))
    if error:
        return False, error
    refs = attention_outputs(t, causal, entry == "fwdbwd", torch.float64)
    errors = [(k, *rel_l2(torch_tensor(outputs[k]), refs[k])) for k in refs]
    refs = None
    torch.cuda.empty_cache()
    return output_check_note("SDPA " + ("and its gradients " if entry == "fwdbwd" else "")
                             + "in f64 (torch, on the GPU)", errors)


def torch_attention_call(t, causal, backward, mode):
    """SDPA on bf16 q, k, v (no autograd, or o.backward(g) with the previous
    gradients dropped); mode as torch_inference_call."""
    import torch
    import torch.nn.functional as F

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if not backward:
        return torch_inference_call(f, mode, t["q"], t["k"], t["v"])
    if mode is not None:
        torch._dynamo.reset()
        f = torch.compile(f, mode=mode)
    marks = mode == "reduce-overhead"
    q, k, v = (t[n].detach().requires_grad_(True) for n in ("q", "k", "v"))

    def call():
        if marks:
            torch.compiler.cudagraph_mark_step_begin()
        q.grad = k.grad = v.grad = None
        f(q, k, v).backward(t["g"])
    return call


def run_attention(args, title, d, causal, direction):
    import torch
    name = attention_model_name(d, causal)
    entry = "forward" if direction == "fwd" else "fwdbwd"
    backward = direction == "fwdbwd"
    flops = attention_flops(d, causal, backward)
    t, paths = attention_data(args, name, d)
    notes = []
    artifact, why = kiln_artifact_or_why(name)
    if artifact is None:
        ms, note = None, why
    else:
        ok, check = check_attention(args, artifact, entry, paths[entry], t, causal)
        print(check, flush=True)
        notes.append(check if ok else "**" + check + "**")
        ms, note = time_kiln(artifact, entry, paths[entry], None, args.warmup, args.iters)
        if ms:
            note += f"; {flops / ms / 1e9:.0f} TFLOP/s"
    rows = [Row("kiln", ms, note, torch=False)]
    # The same kernels with a block per work item or causal pair (not
    # persistent), with the forward's other schedule (its consumers taking
    # turns where they do not by default, or not where they do), and the
    # backward in one pass, checked and timed beside them.
    variants = [("_per_item", "--persistent-attention=false"),
                ("_pingpong", "--attention-schedule=pingpong"),
                ("_cooperative", "--attention-schedule=cooperative")]
    if backward:
        variants.append(("_fused", "--fused-attention-backward"))
    for suffix, flag in variants:
        variant, _ = kiln_artifact_or_why(name + suffix)
        if variant is None:
            continue
        v_ok, v_check = check_attention(args, variant, entry, paths[entry], t, causal)
        print(v_check, flush=True)
        notes.append(f"kiln {flag}: " + (v_check if v_ok else "**" + v_check + "**"))
        v_ms, v_note = time_kiln(variant, entry, paths[entry], None, args.warmup, args.iters)
        if v_ms:
            v_note += f"; {flops / v_ms / 1e9:.0f} TFLOP/s"
        rows.append(Row("kiln " + flag, v_ms, v_note, torch=False))
    for label, mode in MODES:
        try:
            fn = torch_attention_call(t, causal, backward, mode)
            ms = time_calls(fn, args)
            rows.append(Row(label, ms, f"SDPA; {flops / ms / 1e9:.0f} TFLOP/s"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {short_error(e)}"))
        fn = None
        torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    for path in paths.values():
        os.remove(path)
    notes.append("FLOP counts as FlashAttention's: 4 B H T² D forward, 2.5 times "
                 "that backward, half when causal")
    return rows, notes


def attention_workloads():
    """WORKLOADS entries attention_dD[_causal]_fwd and _fwdbwd."""
    workloads = []
    for d, causal in ATTENTION_SHAPES:
        for direction in ("fwd", "fwdbwd"):
            what = "forward" if direction == "fwd" else "forward + backward"
            workloads.append((
                f"attention_d{d}{'_causal' if causal else ''}_{direction}",
                f"attention {what}, B{ATTENTION_B} H{ATTENTION_H} T{ATTENTION_T} D{d} "
                f"bf16{', causal' if causal else ''}",
                ATTENTION_GOALS[direction] if direction == "fwdbwd" or (d == 128 and not causal)
                else "",
                lambda a, title, d=d, causal=causal, direction=direction:
                    run_attention(a, title, d, causal, direction)))
    return workloads


WORKLOADS = [
    ("sine_block", "train step, sine-denoising block (B4 T32 C64 H4, f32, AdamW)",
     "≤ 0.10 ms (≥ 12x the best torch.compile)",
     lambda a, t: run_train(a, t, "sine_block", sine_block_module)),
    ("mlp", "train step, MLP 8->64 tanh ->1 (B64, f32, AdamW)", "",
     lambda a, t: run_train(a, t, "mlp", mlp_module)),
    ("gemm_big", "GEMM + bias + GELU(tanh), bf16, 8192x4096x4096 (MxKxN)",
     "≥ 1.0x cuBLAS",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_8192x4096x4096",
                              8192, 4096, 4096)),
    ("gemm_square", "GEMM + bias + GELU(tanh), bf16, 4096x4096x4096 (MxKxN)",
     "≥ 1.0x cuBLAS",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_4096x4096x4096",
                              4096, 4096, 4096)),
    ("gemm_small", "GEMM + bias + GELU(tanh), bf16, 512x1024x4096 (MxKxN)",
     "≥ 1.0x eager",
     lambda a, t: run_gemm(a, t, "gemm_bias_gelu_512x1024x4096",
                              512, 1024, 4096)),
] + block_gemm_workloads() + [
    ("embedding_backward",
     "embedding backward, table [32768, 1024] bf16, 16384 lookups (B8 T2048)",
     "≥ 0.9x the best torch",
     lambda a, t: run_embedding(a, t, "embedding_backward_32768x1024_8x2048",
                                8, 2048, 32768, 1024)),
    ("cross_entropy",
     "cross entropy forward + backward, bf16 logits [8192, 32768] (mean)",
     "≥ 1.0x the best torch, with less peak memory",
     lambda a, t: run_cross_entropy(a, t, "cross_entropy_8192x32768",
                                    8192, 32768)),
] + attention_workloads() + rnn_workloads() + conv_workloads() + [
    ("transformer_block",
     "train step, transformer block B{B} T{T} C{C} {H} heads, causal, bf16, AdamW".format(
         **BLOCK_SHAPE),
     "≤ 1.3 ms (≥ 1.4x torch.compile with CUDA graphs), memory ≤ 437 MiB", run_block),
    ("byte_lm",
     "train step, byte-level GPT sample (4 blocks, d 128, B32 T128), f32, AdamW",
     "tokens/s against torch.compile",
     lambda a, t: run_byte_lm(a, t, "f32")),
    ("byte_lm_bf16",
     "train step, byte-level GPT sample (4 blocks, d 128, B32 T128), bf16, AdamW",
     "tokens/s against torch.compile",
     lambda a, t: run_byte_lm(a, t, "bf16")),
    ("resnet18_32",
     f"train step, ResNet-18 (CIFAR-style, 32x32, 10 classes), B{RESNET_BATCH} "
     "bf16 NHWC, AdamW",
     "", run_resnet),
]


def environment(dry_run=False):
    import torch
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = "not installed"
    commit_path = os.path.join(HERE, "COMMIT")
    commit = open(commit_path).read().strip() if os.path.exists(commit_path) else "unknown"
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": "none (dry run on the CPU)" if dry_run else torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda (torch)": torch.version.cuda,
        "triton": triton_version,
        "kiln commit": commit,
    }
    flashrnn_path = os.path.join(HERE, "FLASHRNN_COMMIT")
    if os.path.exists(flashrnn_path):
        env["flashrnn commit"] = open(flashrnn_path).read().strip()
    return env


def selected(key, only):
    """Whether --only's names (a workload's key, or a prefix of keys up to
    an underscore: rnn, rnn_lstm, rnn_lstm_12x64) select the workload; all
    when none are given."""
    return not only or any(key == n or key.startswith(n + "_") for n in only)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("output", nargs="?", help="Markdown file for the results")
    p.add_argument("--only", default="", help="comma-separated workloads, or "
                   "prefixes of them (rnn, rnn_lstm, rnn_lstm_12x64): "
                   + ", ".join(w[0] for w in WORKLOADS))
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--optimizers", default="fused,foreach",
                   help="AdamW implementations to try; the fastest is reported")
    p.add_argument("--workdir", default=None,
                   help="where inputs drawn here go (default: the bundle)")
    p.add_argument("--rnn-seconds", type=float, default=2.0,
                   help="recurrent layers: time slow variants over about this "
                   "many seconds of calls (at least 5, at most --iters)")
    p.add_argument("--rnn-timeout", type=float, default=300,
                   help="seconds a FlashRNN backend (or the whole-sequence "
                   "torch.compile) may take to build and run, in its process")
    p.add_argument("--rnn-torch", default="eager,eager_graph,cell,cell_graph",
                   help="the equations in PyTorch to time: "
                   + ", ".join(RNN_TORCH_VARIANTS))
    p.add_argument("--flashrnn-backends", default="triton_fused,cuda",
                   help="FlashRNN backends to try: " + ", ".join(FLASHRNN_FUNCTIONS))
    p.add_argument("--kiln-rnn", default=None,
                   help="the recurrences in PyTorch (default: the bundle's "
                   "kiln_rnn.py, else samples/torch/kiln_rnn.py)")
    p.add_argument("--conv-torch", default="eager,eager_graph",
                   help="convolutions: the PyTorch variants to time: "
                   + ", ".join(CONV_TORCH_VARIANTS))
    p.add_argument("--resnet-torch", default="eager,eager_graph,compile,compile_graph",
                   help="ResNet-18: the PyTorch variants to time: "
                   + ", ".join(RESNET_TORCH_VARIANTS))
    p.add_argument("--resnet-precisions", default="master,autocast",
                   help="ResNet-18: PyTorch's bf16 recipes: master (bf16 "
                   "parameters, f32 master weights: what kiln's --precision=bf16 "
                   "does), autocast (f32 parameters under autocast)")
    p.add_argument("--resnet-optimizers", default="",
                   help="ResNet-18: AdamW implementations to try (fused, "
                   "foreach; default fused, foreach on the CPU); the fastest "
                   "is reported")
    p.add_argument("--resnet-seed", type=int, default=1,
                   help="ResNet-18: kiln-run's --seed for the parameters")
    p.add_argument("--dry-run", action="store_true",
                   help="recurrent layers, convolutions and ResNet-18 on the "
                   "CPU at tiny sizes, without kiln (checks the PyTorch and "
                   "FlashRNN code paths)")
    p.add_argument("--rnn-worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--cpu-check", action="store_true",
                   help="check the PyTorch ResNet-18 against the bundle's "
                   "kiln-ref loss (resnet18_32_check) on the CPU, without a GPU")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    if args.cpu_check:
        ok, text = check_resnet_small("cpu")
        print(text)
        return 0 if ok else 1
    if args.rnn_worker:
        return rnn_worker(json.loads(args.rnn_worker))
    if not args.output:
        p.error("give the Markdown output file (or --self-test)")
    args.optimizers = [o for o in args.optimizers.split(",") if o]
    args.workdir = args.workdir or HERE
    args.rnn_torch = [v for v in args.rnn_torch.split(",") if v]
    args.flashrnn_backends = [v for v in args.flashrnn_backends.split(",") if v]
    args.rnn_results = {}
    args.conv_torch = [v for v in args.conv_torch.split(",") if v]
    args.conv_cache = {}
    args.resnet_torch = [v for v in args.resnet_torch.split(",") if v]
    args.resnet_precisions = [v for v in args.resnet_precisions.split(",") if v]
    args.resnet_optimizers = [v for v in args.resnet_optimizers.split(",") if v]
    for value, known, flag in ((args.rnn_torch, RNN_TORCH_VARIANTS, "--rnn-torch"),
                               (args.flashrnn_backends, FLASHRNN_FUNCTIONS,
                                "--flashrnn-backends"),
                               (args.conv_torch, CONV_TORCH_VARIANTS, "--conv-torch"),
                               (args.resnet_torch, RESNET_TORCH_VARIANTS, "--resnet-torch"),
                               (args.resnet_precisions, RESNET_PRECISIONS,
                                "--resnet-precisions"),
                               (args.resnet_optimizers, ("fused", "foreach"),
                                "--resnet-optimizers")):
        if set(value) - set(known):
            p.error(f"{flag}: unknown {', '.join(sorted(set(value) - set(known)))}")
    only = set(filter(None, args.only.split(",")))
    unknown = {n for n in only if not any(selected(w[0], {n}) for w in WORKLOADS)}
    if unknown:
        p.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    args.only = only
    if args.dry_run and any(not w[0].startswith(("rnn_", "conv_", "resnet18_"))
                            for w in WORKLOADS if selected(w[0], only)):
        p.error("--dry-run runs the recurrent layers, the convolutions and "
                "ResNet-18 only: add --only rnn, conv or resnet18_32")

    import torch
    if not args.dry_run and not torch.cuda.is_available():
        sys.exit("run.py: no CUDA device")
    env = environment(args.dry_run)
    for k, v in env.items():
        print(f"{k}: {v}")
    sections, summary, results = [], [], {}
    for key, title, goal, run in WORKLOADS:
        if not selected(key, only):
            continue
        print(f"\n== {title}", flush=True)
        try:
            rows, notes = run(args, title)
        except Exception as e:
            traceback.print_exc()
            rows, notes = [Row("kiln", None, f"failed: {e}", torch=False)], []
        table = format_table(title, rows, goal)
        if notes:
            table += "\n" + "\n".join(notes) + "\n"
        print("\n" + table, flush=True)
        sections.append(table)
        summary.append(summary_line(title, rows))
        results[key] = rows
    drop_conv_data(args.conv_cache)

    md = ["# kiln against PyTorch", ""]
    md += [f"- {k}: {v}" for k, v in env.items()]
    md += [f"- method: medians of {args.iters} CUDA-event-timed calls after "
           f"{args.warmup} warm-up calls, back to back on the same inputs; "
           "kiln: kiln-run --bench (replays of the entry's CUDA graph); "
           "torch: the same events around each call (compiled variants "
           "warmed up, so compilation is excluded)",
           "- kiln's train_step replays run with the runtime's lr 0 and step 1 "
           "(the same kernels as any other lr); torch uses lr 1e-3", ""]
    md += ["## Summary", "", "| workload | kiln ms | best torch ms | kiln / best torch "
           "| speedup |", "|---|---:|---:|---:|---:|"] + summary + [""]
    conv_tables = conv_layout_tables(results)
    if conv_tables:
        md += ["## Convolutions by layout", ""] + conv_tables
        print("\n" + "\n".join(conv_tables), flush=True)
    md += ["## Workloads", ""] + sections
    with open(args.output, "w") as f:
        f.write("\n".join(md))
    print(f"wrote {args.output}")
    return 0


# ---------------------------------------------------------------------------
# Self-test (no GPU, no PyTorch).

def self_test():
    import tempfile
    line = ("ran train_step: 1 output(s)\nbench train_step: median 0.0421 ms, "
            "min 0.0400 ms, mean 0.0433 ms over 200 replays (20 warm-up calls)\n")
    b = parse_kiln_bench(line)
    assert b == {"entry": "train_step", "median": 0.0421, "min": 0.04,
                 "mean": 0.0433, "replays": 200, "programmatic": None}, b
    b = parse_kiln_bench(line.replace("calls)", "calls; 38 of 40 launches "
                                      "programmatic)"))
    assert b["programmatic"] == "38 of 40 launches programmatic", b
    assert parse_kiln_bench("error: no CUDA device\n") is None
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
    m = KILN_BENCH_MEMORY.search(line + "bench memory: peak 641728512 bytes in use "
                                 "(612.0 MiB), 650117120 reserved from the device\n")
    assert m and int(m.group(1)) == 641728512, m

    rows = [Row("kiln", 0.05, torch=False), Row("torch eager", 3.0),
            Row("torch.compile", 2.0), Row("torch.compile reduce-overhead", 1.0)]
    assert best_torch(rows).name == "torch.compile reduce-overhead"
    ratio, speedup = ratio_line(0.05, best_torch(rows))
    assert abs(ratio - 0.05) < 1e-12 and abs(speedup - 20.0) < 1e-12
    table = format_table("t", rows, "goal")
    last = table.strip().splitlines()[-1]
    assert "kiln / best torch" in last and "0.050" in last and "20.00x" in last, last
    assert "| torch eager | 3.000 | 60.00x |" in table, table
    assert "| kiln | 0.0500 |  |" in table, table
    assert summary_line("t", rows).endswith("| 0.050 | 20.00x |")

    # Failed rows: ignored for the best; a failed kiln gives no ratio.
    rows = [Row("kiln", 0.5, torch=False), Row("torch eager", None, "failed"),
            Row("torch.compile", 0.4)]
    assert best_torch(rows).name == "torch.compile"
    assert "1.250" in format_table("t", rows).strip().splitlines()[-1]
    rows = [Row("kiln", None, torch=False), Row("torch eager", 1.0)]
    assert "kiln failed" in format_table("t", rows)
    assert ratio_line(None, best_torch(rows)) == (None, None)
    assert ratio_line(1.0, None) == (None, None)
    assert "no torch result" in format_table("t", [Row("kiln", 1.0, torch=False)])
    assert fmt_ms(None) == "failed" and fmt_ms(0.01234) == "0.0123"

    ok, note = gemm_check_note(1.5e-3, 4e-3, 0)
    assert ok and note.endswith(": ok") and "1.50e-03" in note, note
    assert not gemm_check_note(0.2, 1.0, 0)[0]
    assert not gemm_check_note(1e-3, 1e-3, 5)[0]
    assert not gemm_check_note(float("nan"), 1.0, 0)[0]
    ok, note = embedding_check_note(2e-3, 0, True)
    assert ok and note.endswith(": ok") and "bitwise identical" in note, note
    assert not embedding_check_note(2e-3, 0, False)[0]
    assert not embedding_check_note(2e-3, 3, True)[0]
    assert not embedding_check_note(float("nan"), 0, True)[0]

    # --only: workload keys and prefixes of them up to an underscore.
    assert selected("rnn_lstm_12x64_fwd", set())
    assert selected("rnn_lstm_12x64_fwd", {"rnn"})
    assert selected("rnn_lstm_12x64_fwd", {"rnn_lstm_12x64"})
    assert selected("rnn_lstm_12x64_fwd", {"gemm_big", "rnn_lstm_12x64_fwd"})
    assert not selected("rnn_lstm_12x64_fwd", {"rnn_lstm_12x64_fwdbwd"})
    assert not selected("rnn_lstm_12x64_fwd", {"rnn_ls"})
    assert selected("gemm_big", {"gemm"})
    assert not selected("mlp", {"rnn"})
    keys = [w[0] for w in WORKLOADS]
    assert len(keys) == len(set(keys)), keys
    rnn_keys = [k for k in keys if selected(k, {"rnn"})]
    assert len(rnn_keys) == 2 * len(RNN_WORKLOADS), rnn_keys
    titles = {w[0]: w[1] for w in WORKLOADS}
    assert titles["rnn_lstm_12x64_fwd"].endswith("(goal ≤ 1.0 ms)"), titles
    assert titles["rnn_gru_1x768_fwdbwd"].endswith("(goal ≤ 8.0 ms)"), titles
    assert "goal" not in titles["rnn_slstm_12x64_fwdbwd"], titles

    # FlashRNN's einops permutations, on a stand-in tensor.
    class Axes:
        def __init__(self, shape):
            self.shape = list(shape)

        def permute(self, *order):
            return Axes([self.shape[i] for i in order])
    y = rearrange_permutation(Axes([2, 3, 5, 7]), "ns b nh dh -> nh ns b dh", dh=7)
    assert y.shape == [5, 2, 3, 7], y.shape
    for bad in ("a (b c) -> a b c", "a b -> a c", "a b c -> c b a"):
        try:
            rearrange_permutation(Axes([2, 3]), bad)
            raise AssertionError(f"accepted {bad!r}")
        except ValueError:
            pass
    try:
        rearrange_permutation(Axes([2, 3]), "a b -> b a", a=3)
        raise AssertionError("accepted a wrong size")
    except ValueError:
        pass

    # The worker's result line, its errors, and the states check.
    text = "building...\n" + RNN_RESULT + json.dumps(
        {"fwd": {"ms": 1.5, "note": "n"}, "fwdbwd": {"error": "E: x"}}) + "\n"
    assert parse_rnn_result(text) == {"fwd": {"ms": 1.5, "note": "n"},
                                      "fwdbwd": {"error": "E: x"}}
    assert parse_rnn_result("Traceback\n") is None
    assert short_error(ValueError("first\nsecond")) == "ValueError: first"
    assert short_error(KeyError()) == "KeyError"
    ok, note = rnn_check_note("kiln", (1e-2, 3e-3, 0), (2e-2, 8e-3))
    assert ok and note.endswith(": ok") and "torch eager on the bf16" in note, note
    ok, note = rnn_check_note("kiln", (1e-1, 3e-2, 0), (2e-2, 1e-2))
    assert not ok and note.endswith("FAILED"), note
    assert rnn_check_note("kiln", (1e-1, 3e-2, 0), (2e-1, 5e-2))[0]
    assert not rnn_check_note("kiln", (1e-3, 1e-3, 2))[0]
    assert not rnn_check_note("kiln", (float("nan"), float("nan"), 0))[0]

    # Convolutions: the layers, their keys, shapes, work and tables.
    stem, down = conv_layer("7x7s2_3_64_224"), conv_layer("3x3s2_128_128_56")
    assert conv_shapes(stem, "nhwc") == {"x": [32, 224, 224, 3], "w": [64, 7, 7, 3],
                                         "y": [32, 112, 112, 64]}, conv_shapes(stem, "nhwc")
    assert conv_shapes(down, "nchw") == {"x": [32, 128, 56, 56], "w": [128, 128, 3, 3],
                                         "y": [32, 128, 28, 28]}, conv_shapes(down, "nchw")
    assert conv_shapes(conv_layer("1x1_64_256_56"), "nhwc")["y"] == [32, 56, 56, 256]
    assert conv_directions(stem) == ["fwd", "fwdbwd", "fwdbwd_nodx"]
    assert conv_directions(down) == ["fwd", "fwdbwd"]
    one = 2.0 * 32 * 28 * 28 * 128 * 128 * 9
    assert conv_flops(down, "nhwc", "fwd") == one
    assert conv_flops(down, "nchw", "fwdbwd") == 3 * one
    assert conv_flops(stem, "nhwc", "fwdbwd_nodx") == 2 * conv_flops(stem, "nhwc", "fwd")
    assert conv_anchor(stem, "nhwc", "fwd") == 0.229
    assert conv_anchor(stem, "nchw", "fwdbwd_nodx") == 1.089
    assert conv_anchor(conv_layer("3x3_512_512_7"), "nhwc", "fwdbwd") == 0.236
    conv_keys = [k for k in keys if selected(k, {"conv"})]
    assert len(conv_keys) == 2 * (2 * len(CONV_LAYERS) + 1), conv_keys
    assert "conv_nhwc_3x3_64_64_56_fwd" in conv_keys
    assert "conv_nchw_7x7s2_3_64_224_fwdbwd_nodx" in conv_keys
    assert [k for k in keys if selected(k, {"conv_nhwc_3x3_64_64_56"})] == [
        "conv_nhwc_3x3_64_64_56_fwd", "conv_nhwc_3x3_64_64_56_fwdbwd"]
    assert len([k for k in keys if selected(k, {"conv_nchw"})]) == len(conv_keys) // 2
    assert not selected("resnet18_32", {"conv"}) and selected("resnet18_32", {"resnet18"})
    assert "anchor 0.0276 ms" in next(w[2] for w in WORKLOADS
                                      if w[0] == "conv_nhwc_3x3_64_64_56_fwd")
    assert "≥ 1.5x" in next(w[2] for w in WORKLOADS if w[0] == "conv_nchw_3x3_64_64_56_fwd")
    fake = {"conv_nhwc_3x3_64_64_56_fwd": [Row("kiln", 0.02, torch=False),
                                           Row("torch eager (cuDNN)", 0.03),
                                           Row("torch eager, CUDA graph", 0.025)],
            "conv_nhwc_3x3_64_64_56_fwdbwd": [Row("kiln", None, "kilnc failed", torch=False),
                                              Row("torch eager (cuDNN)", 0.17)],
            "mlp": [Row("kiln", 1.0, torch=False)]}
    tables = conv_layout_tables(fake)
    assert len(tables) == 1 and tables[0].startswith("### conv2d NHWC"), tables
    lines = tables[0].strip().splitlines()
    assert len(lines) == 6, lines
    assert lines[4] == ("| 3x3, 64->64, 56² | forward | 0.0200 | 0.0250 (torch eager, "
                        "CUDA graph) | 0.800 | 1.25x | 0.0276 |"), lines[4]
    assert lines[5] == ("| 3x3, 64->64, 56² | forward + backward | failed | 0.1700 "
                        "(torch eager (cuDNN)) | n/a | n/a | 0.1700 |"), lines[5]
    assert conv_layout_tables({"mlp": fake["mlp"]}) == []
    ok, note = output_check_note("conv2d in f64", [("y", 2e-3, 0), ("dw", 4e-3, 0)])
    assert ok and note == ("kiln's outputs vs conv2d in f64: y rel L2 err 2.00e-03; "
                           "dw rel L2 err 4.00e-03: ok"), note
    ok, note = output_check_note("r", [("y", 2e-3, 0), ("dx", 2e-3, 7)])
    assert not ok and "7 non-finite" in note and note.endswith("FAILED"), note
    assert not output_check_note("r", [("y", 0.5, 0)])[0]
    assert not output_check_note("r", [("y", float("nan"), 0)])[0]

    # ResNet-18: its layers and the names kiln and torch give them.
    convs = resnet18_convs(RESNET_WIDTHS)
    assert len(convs) == 20 and convs[0][:3] == ("conv1", "conv1", "bn1"), convs[0]
    downs = [c for c in convs if c[0].endswith("_down")]
    assert [c[0] for c in downs] == ["layer2_0_down", "layer3_0_down", "layer4_0_down"]
    assert all(c[5:] == (1, 2, 0) and c[1].endswith("shortcut.0") for c in downs), downs
    assert [c[6] for c in convs if c[0].endswith("_conv1")] == [1, 1, 2, 1, 2, 1, 2, 1]
    sizes = {n: (cout * k * k * cin) for n, _, _, cin, cout, k, _, _ in convs}
    params = sum(sizes.values()) + sum(2 * c[4] for c in convs) + 512 * 10 + 10
    assert params == 11173962, params  # ResNet-18 for CIFAR-10
    names = resnet18_names(RESNET_WIDTHS)
    assert len(names) == 5 * len(convs) + 2, len(names)
    assert names["layer3_0_down_w"] == ("layer3.0.shortcut.0.weight", "conv")
    assert names["layer3_0_down_bn_rv"] == ("layer3.0.shortcut.1.running_var", None)
    assert names["conv1_bn_g"] == ("bn1.weight", None)
    assert names["fc_w"] == ("fc.weight", "linear")
    assert len(resnet18_convs(RESNET_CHECK_WIDTHS)) == 20
    ckpt = {"conv1_w": "bf16", "master.conv1_w": "f32", "conv1_bn_rm": "rm"}

    class Value(str):
        def float(self):
            return self
    got = f32_values({k: Value(v) for k, v in ckpt.items()}, ["conv1_w", "conv1_bn_rm", "fc_b"])
    assert got == {"conv1_w": "f32", "conv1_bn_rm": "rm"}, got

    # The generated models are what their scripts write (in the checkout).
    models = os.path.join(HERE, "models")
    for script in ("gen_conv.py", "gen_resnet18.py"):
        if os.path.exists(os.path.join(models, script)):
            proc = subprocess.run([sys.executable, os.path.join(models, script), "--check"],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr

    with tempfile.TemporaryDirectory() as d:
        # A model kilnc could not compile: its message, else a missing file.
        with open(os.path.join(d, "m.kilnc-error"), "w") as f:
            f.write("m.mlir:4:8: error: no GPU kernel for 'kiln.conv2d' yet\n  ^\n")
        assert kiln_artifact_or_why("m", d) == (
            None, "kilnc failed: m.mlir:4:8: error: no GPU kernel for 'kiln.conv2d' yet")
        assert kiln_artifact_or_why("n", d) == (None, "no n.kiln in the bundle")
        open(os.path.join(d, "m.kiln"), "w").close()
        assert kiln_artifact_or_why("m", d) == (os.path.join(d, "m.kiln"), None)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.safetensors")
        tensors = {"x": ("F32", [2, 3], struct.pack("<6f", *range(6))),
                   "b": ("BF16", [2], b"\x80\x3f\x00\x40"),
                   "s": ("I32", [], struct.pack("<i", 7))}
        write_safetensors(path, tensors, {"kiln.function": "f"})
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
        assert n % 8 == 0
        assert read_safetensors(path) == tensors
        try:
            write_safetensors(path, {"x": ("F32", [3], b"\0" * 8)})
            raise AssertionError("a wrong size was accepted")
        except ValueError:
            pass
        # The bundle's own files, where present.
        for name in sorted(os.listdir(HERE)):
            if name.endswith(".safetensors"):
                for t, (dtype, shape, data) in read_safetensors(os.path.join(HERE, name)).items():
                    count = 1
                    for s in shape:
                        count *= s
                    assert count * DTYPE_SIZES[dtype] == len(data), (name, t)
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
