"""Convolutions: ResNet-50's layers at N = 32 in bf16, NHWC and NCHW (the
conv2d anchors of TARGETS.md), kiln.conv2d and its two backward ops against
cuDNN through torch.nn.functional.conv2d."""

import os
import traceback
import types

from bench_harness import (Row, best_torch, cuda_graph_call, fmt_ms,
                           kiln_artifact_or_why, kiln_outputs,
                           output_check_note, ratio_line, rel_l2,
                           safetensors_entry, short_error, time_calls,
                           time_kiln, torch_tensor, write_safetensors)

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
    entry = CONV_DIRECTIONS[direction][0]
    run_layer, n = conv_run_size(args, layer)
    c = types.SimpleNamespace(
        name=conv_model_name(layout, layer["name"]), entry=entry,
        layout=layout, direction=direction, n=n, run_layer=run_layer,
        data=conv_data(args, layer, layout),
        flops=conv_flops(run_layer, layout, direction, n))
    notes = []
    rows = conv_kiln_rows(args, c, notes) + conv_torch_rows(args, title, c)
    notes.append(conv_method_note(args, c, conv_anchor(layer, layout, direction)))
    return rows, notes


def conv_kiln_rows(args, c, notes):
    """kiln's row, its outputs checked first (the check appended to
    `notes`; --dry-run: the check's code on torch eager's bf16 outputs),
    and the --no-tma artifact's where the bundle has one."""
    import torch
    artifact, why = kiln_artifact_or_why(c.name)
    if args.dry_run:
        notes.append(f"dry run on the CPU at N{c.n} {c.run_layer['hw']}²: "
                     "no kiln, no CUDA graphs")
        ok, check = conv_check(
            conv_outputs(c.data, c.layout, c.direction, torch.bfloat16),
            c.data, c.layout, c.direction, who="torch eager")
        notes.append(check if ok else "**" + check + "**")
        return [Row("kiln", None, "not run (dry run)", torch=False)]
    if artifact is None:
        rows = [Row("kiln", None, why, torch=False)]
    else:
        ok, check = check_conv(args, artifact, c.layout, c.direction, c.data)
        print(check, flush=True)
        notes.append(check if ok else "**" + check + "**")
        rows = [Row("kiln", *time_conv_kiln(args, artifact, c), torch=False)]
    # Channels last: the same kernels with the threads gathering the
    # operands instead of the TMA (kilnc --no-tma), for comparison.
    gathered, _ = kiln_artifact_or_why(c.name + "_notma")
    if gathered is not None:
        ok, check = check_conv(args, gathered, c.layout, c.direction, c.data)
        if not ok:
            notes.append("--no-tma: **" + check + "**")
        rows.append(Row("kiln --no-tma (threads gather)",
                        *time_conv_kiln(args, gathered, c), torch=False))
    return rows


def time_conv_kiln(args, artifact, c):
    """(ms, note) of the direction's entry, with its TFLOP/s."""
    ms, note = time_kiln(artifact, c.entry, c.data["paths"][c.entry], None,
                         args.warmup, args.iters)
    if ms:
        note += f"; {c.flops / ms / 1e9:.0f} TFLOP/s"
    return ms, note


def conv_torch_rows(args, title, c):
    """The PyTorch variants of --conv-torch."""
    import torch
    rows = []
    for variant in args.conv_torch:
        label = CONV_TORCH_VARIANTS[variant]
        if args.dry_run and variant.endswith("_graph"):
            rows.append(Row(label, None, "not run (dry run: no CUDA)"))
            continue
        fn = None
        try:
            fn = torch_conv_call(c.data, c.layout, c.direction, variant)
            t = time_calls(fn, args)
            rows.append(Row(label, t, f"{c.flops / t / 1e9:.{1 if args.dry_run else 0}f} TFLOP/s"))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(label, None, f"failed: {short_error(e)}"))
        fn = None
        if not args.dry_run:
            torch.cuda.synchronize()
        print(f"{title}: {label}: {fmt_ms(rows[-1].ms)} ms", flush=True)
    return rows


def conv_method_note(args, c, anchor):
    """How both sides ran: the data, PyTorch's memory format, cuDNN, what
    autograd computes, kiln's entry and the anchor."""
    import torch
    memory = "channels_last" if c.layout == "nhwc" else "contiguous (NCHW)"
    grads = CONV_DIRECTIONS[c.direction][1]
    what = ("no autograd" if not grads else
            "autograd: y's backward pass of the same g into "
            + " and ".join({"dx": "x", "dw": "w"}[g] for g in grads)
            + ("" if "dx" in grads else " (x.requires_grad False)"))
    return (f"x, w, g uniform in [-1, 1) in bf16 (torch, seed 1); "
            f"torch: F.conv2d, {memory}, cudnn.benchmark"
            + ("" if args.dry_run else f", cuDNN {torch.backends.cudnn.version()}")
            + f", {what}; kiln: entry {c.entry}. "
            f"Anchor (TARGETS.md, cuDNN on the H200): {fmt_ms(anchor)} ms")


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


def self_test():
    # The layers, their keys, shapes, work and tables.
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
    goals = {w[0]: w[2] for w in conv_workloads()}
    assert "anchor 0.0276 ms" in goals["conv_nhwc_3x3_64_64_56_fwd"]
    assert "≥ 1.5x" in goals["conv_nchw_3x3_64_64_56_fwd"]
    self_test_tables()


def self_test_tables():
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
