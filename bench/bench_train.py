"""Training steps: kiln's train_step against the same model's AdamW step in
PyTorch, for the small samples (sine_block, mlp), and the PyTorch side the
larger models share (the models built with kiln's parameters, the loss
check against kiln-ref, the timed step)."""

import os
import traceback

from bench_harness import (HERE, MODES, Row, fmt_ms, load_torch, time_events,
                           time_kiln)


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
