"""ResNet-18, CIFAR-style (32x32 input: a 3x3 stem, no max pool), bf16 NHWC:
kiln's train_step (kilnc --train=adamw --precision=bf16) against the same
network in PyTorch, channels_last, AdamW."""

import os
import subprocess
import traceback
import types

from bench_harness import (HERE, Row, cuda_graph_call, fmt_ms,
                           kiln_artifact_or_why, load_torch, read_safetensors,
                           short_error, time_calls, time_kiln, torch_tensor)
from bench_train import build_into, check_loss

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


def resnet_model(params, precision, widths, device):
    """ResNet-18 at `widths` from f32 `params` (kiln names), channels_last;
    precision "master": its convolutions and fc in bf16. Returns (model,
    its bf16 parameters)."""
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
    return model, narrow


def resnet_update(model, narrow, variant, optimizer, lr):
    """AdamW's step as a callable: over f32 masters of the bf16 parameters
    `narrow` (their gradients widened into the masters first, the bf16
    parameters rounded from them after) and over the f32 parameters."""
    import torch
    masters = [p.detach().float().clone().requires_grad_(True) for p in narrow]
    for m in masters:
        m.grad = torch.zeros_like(m)
    wide = [p for p in model.parameters() if p.dtype == torch.float32]
    kind = {optimizer: True}  # fused=True or foreach=True
    if variant == "eager_graph":
        kind["capturable"] = True
    opt = torch.optim.AdamW(masters + wide, lr=lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01, **kind)
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
    return update


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
    model, narrow = resnet_model(params, precision, widths, device)
    update = resnet_update(model, narrow, variant, optimizer, lr)
    x, y = data["x"], data["y"]
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
    torch.backends.cudnn.benchmark = True
    r = types.SimpleNamespace(
        name="resnet18_32", dry=dry, device="cpu" if dry else "cuda",
        widths=RESNET_CHECK_WIDTHS if dry else RESNET_WIDTHS)
    r.names = resnet18_names(r.widths)
    notes = []
    ok, text = check_resnet_small(r.device)
    notes.append(text if ok else "**" + text + "**")
    if dry:
        r.data, r.state = resnet_dry_run_data(r.device)
        notes.append(f"dry run on the CPU: widths {'/'.join(map(str, r.widths))}, "
                     f"B{r.data['x'].shape[0]}; no kiln, no CUDA graphs")
        rows = [Row("kiln", None, "not run (dry run)", torch=False)]
    else:
        rows = resnet_kiln_rows(args, r, notes)
    params = resnet_params(args, r, notes)
    optimizers = args.resnet_optimizers or (["foreach"] if dry else ["fused"])
    for precision in args.resnet_precisions:
        for variant in args.resnet_torch:
            label = f"{RESNET_TORCH_VARIANTS[variant]} ({RESNET_PRECISIONS[precision]})"
            if dry and variant.endswith("_graph"):
                rows.append(Row(label, None, "not run (dry run: no CUDA)"))
                continue
            rows.append(resnet_torch_row(args, title, r, params, precision,
                                         variant, optimizers, label))
    notes.append("torch: channels_last, cudnn.benchmark, AdamW lr 1e-3 betas "
                 "0.9/0.999 eps 1e-8 weight decay 0.01 on every parameter; "
                 "'bf16 params, f32 master' is what kiln's --precision=bf16 does "
                 "(bf16 storage, f32 master weights and optimizer state; the "
                 "batch norms' weights f32 in torch, bf16 with f32 masters in "
                 "kiln); kiln: train_step replays (lr 0, step 1), parameters "
                 f"drawn by kiln-run --seed {args.resnet_seed}")
    return rows, notes


def resnet_dry_run_data(device):
    """(batch, parameters) of a dry run: resnet18_32_check's batch and
    kiln-ref's parameters where the bundle has them, else a batch drawn by
    torch (and no parameters)."""
    import torch
    check = "resnet18_32_check"
    inputs = os.path.join(HERE, f"{check}.inputs.safetensors")
    if os.path.exists(inputs):
        return (load_torch(inputs, device),
                load_torch(os.path.join(HERE, f"{check}.params.safetensors"), device))
    gen = torch.Generator().manual_seed(1)
    return {"x": torch.rand([RESNET_CHECK_BATCH, RESNET_SIZE, RESNET_SIZE, 3],
                            generator=gen) * 2 - 1,
            "y": torch.randint(0, RESNET_CLASSES, [RESNET_CHECK_BATCH],
                               generator=gen, dtype=torch.int32)}, None


def resnet_kiln_rows(args, r, notes):
    """kiln's rows (train_step replays, and with --serial-launches); sets
    r.data (the bundle's batch) and r.state (kiln-run's initial parameters,
    None when there are none)."""
    inputs = os.path.join(HERE, f"{r.name}.inputs.safetensors")
    r.data, r.state = load_torch(inputs), None
    artifact, why = kiln_artifact_or_why(r.name)
    if artifact is None:
        return [Row("kiln", None, why, torch=False)]
    extra = ["--seed", str(args.resnet_seed)]
    ms, note = time_kiln(artifact, "train_step", inputs, None, args.warmup,
                         args.iters, extra)
    serial_ms, serial_note = time_kiln(artifact, "train_step", inputs, None,
                                       args.warmup, args.iters,
                                       extra + ["--serial-launches"])
    r.state, error = kiln_initial_state(artifact, inputs, args.resnet_seed,
                                        args.workdir, r.names)
    if error:
        notes.append(f"**kiln's initial parameters not read ({error}): torch "
                     "draws its own**")
    return [Row("kiln", ms, note, torch=False),
            Row("kiln, serial launches", serial_ms, serial_note, torch=False)]


def resnet_params(args, r, notes):
    """The f32 parameters (kiln names) torch starts from: kiln's (checked
    against kiln-ref's loss where the bundle has it), else torch's own
    draws; how, appended to `notes`."""
    if r.state is None:
        model, _ = resnet18_module(r.widths)
        resnet18_torch_init(model)
        notes.append("parameters: torch's draws from the model's initialisers "
                     "(no kiln artifact)")
        return {k: v.to(r.device) for k, v in kiln_named(model, r.names).items()}
    params = f32_values(r.state, r.names)
    if r.dry:
        notes.append("parameters: kiln-ref's (resnet18_32_check.params.safetensors)")
        return params
    expected = os.path.join(HERE, f"{r.name}.expected.safetensors")
    if os.path.exists(expected):
        ok, text = check_resnet_loss(f"{r.name} (B{RESNET_BATCH}, kiln-ref's "
                                     "initialisers vs kiln-run's)",
                                     r.widths, params, r.data, expected)
        notes.append(text if ok else "**" + text + "**")
    notes.append(f"parameters: kiln-run's initialisers (--seed {args.resnet_seed}, on "
                 "the GPU), copied into torch (the f32 master weights; the batch "
                 "norms' f32 running statistics)")
    return params


def resnet_torch_row(args, title, r, params, precision, variant, optimizers,
                     label):
    """One PyTorch variant's row: its step timed with each AdamW
    implementation of `optimizers`, the fastest reported."""
    import torch
    best, timings, losses = None, [], []
    for optimizer in optimizers:
        step = None
        try:
            step = resnet_train_step(params, r.data, precision, variant, optimizer,
                                     widths=r.widths, device=r.device)
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
        if not r.dry:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    note = "AdamW " + ", ".join(timings) + " ms"
    if losses:
        note += f"; first step's loss {losses[0]:.4f}"
    row = Row(label, best[0] if best else None,
              note + (f"; best {best[1]}" if best else ""))
    print(f"{title}: {label}: {fmt_ms(row.ms)} ms ({note})", flush=True)
    return row


def self_test():
    # The layers and the names kiln and torch give them.
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
