"""Attention: B8 H16 T2048 bf16, head dims 64 and 128, causal and not,
forward and forward + backward, against PyTorch's scaled_dot_product_attention,
kiln's outputs checked against f64."""

import os
import traceback

from bench_harness import (MODES, Row, fmt_ms, kiln_artifact_or_why,
                           kiln_outputs, output_check_note, rel_l2,
                           safetensors_entry, short_error, time_calls,
                           time_kiln, torch_inference_call, torch_tensor,
                           write_safetensors)

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
