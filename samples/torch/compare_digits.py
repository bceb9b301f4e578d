#!/usr/bin/env python3
"""The digits CNN trained in kiln and in PyTorch, compared step by step and on held-out data.

    compare_digits.py --model digits_cnn.mlir --artifact digits_cnn.kiln
        --eval-artifact digits_cnn_eval.kiln --train TRAIN.kilndata
        --heldout HELDOUT.kilndata --workdir DIR [--kiln-run ./kiln-run]
        [--steps 500] [--lr 3e-3] [--warmup 25] [--seed 1]
        [--strict-steps 30] [--tolerance 1e-3] [--accuracy-above 0.98]
        [--accuracy-tolerance 0.02] [--params PARAMS.safetensors]
        [--expected EXPECTED.safetensors] [--reference-log REFERENCE.log]
        [--bf16-artifact MODEL_BF16.kiln --bf16-eval-artifact EVAL_BF16.kiln]
        [--device cuda] [--torch-only] [--kiln-ref KILN_REF]

MODEL.mlir is samples/digits_cnn.mlir (images [B, 1, 8, 8] reshaped to NHWC
-> 3 x {conv 3x3 -> batch norm with running statistics -> ReLU}, a 2x2 max
pool after the second -> global average pool -> Linear -> cross entropy),
MODEL.kiln its training artifact (kilnc with its default AdamW: betas 0.9,
0.999, eps 1e-8, weight decay 0.01, no clipping), EVAL.kiln an artifact of
the same model with the evaluation's batch (the held-out split's 179 records).

1. kiln: kiln-run writes the parameters it starts from (a run of 0 steps),
   trains the artifact for --steps steps on TRAIN.kilndata in file order
   (--no-shuffle) with --warmup steps of warm-up and a cosine decay to 0 at
   --steps, logging every step's loss, and evaluates the checkpoint with
   EVAL.kiln on HELDOUT.kilndata: its forward entry normalises with the
   running statistics, and gives the mean loss and accuracy.
2. With --params (kiln-ref --init-params under the same seed), kiln-run's
   initial parameters must match them; with --expected (kiln-ref's f64 loss
   of MODEL.mlir at PARAMS and the random images and labels PARAMS also
   holds: batch norm on the batch's statistics), the PyTorch model's loss
   there must match it (relative 1e-5 in f32, 1e-6 in f64).
3. PyTorch: the same model in torch.nn.functional (F.conv2d on the NCHW
   view with the filters [O, KH, KW, C] permuted to [O, C, KH, KW],
   F.batch_norm with the same eps and momentum, F.max_pool2d,
   F.cross_entropy; attributes read from MODEL.mlir) starts from kiln-run's
   initial parameters and running statistics, trains on the same batches in
   the same order with torch.optim.AdamW under the same hyper-parameters and
   learning rates (rounded to f32 as kiln-run passes them), in f32 without
   TF32, then evaluates in eval mode on the same held-out records.
4. Bounds (else the exit status is 1): the per-step training losses of the
   first --strict-steps steps agree within --tolerance (relative); kiln's
   held-out accuracy is above --accuracy-above and within
   --accuracy-tolerance of PyTorch's. All steps are tabulated (losses.md).
   Two f32 trainings of this model drift apart as rounding differences flip
   max-pool winners and ReLU signs: PyTorch and the CPU reference trainer
   (both on the CPU, seed 1) agree within 1e-4 relative over the first 35
   steps, reach 1e-3 near step 50 and 1-2% after 150; hence the losses are
   bounded over the first 30 steps and the end of training by the accuracy.
   With --reference-log (train_reference's first steps on the CPU reference
   from the same start), kiln-run's losses of the logged steps up to
   --strict-steps must agree with it within --tolerance. With
   --bf16-artifact, kiln's bf16 run is trained and evaluated beside it,
   without a bound.

--torch-only trains and evaluates only the PyTorch side (from --params, or
from kiln-run's initial parameters in DIR/kiln_init.safetensors), e.g. on a
machine without a GPU with --device cpu; with --reference-log its losses are
then compared with the CPU reference's.

--kiln-ref KILN_REF runs the kiln side on the CPU instead of kiln-run, with
the same bounds: --artifact and --eval-artifact are then what
kilnc --emit=mlir writes for the model and for its evaluation copy
(--inference), and kiln-ref runs their train_step (from --params, with zero
optimizer state) and forward entries, the fused entries that the GPU code
is generated from (about 0.3 s a step).

    python3 compare_digits.py --self-test [--model samples/digits_cnn.mlir]

checks the model parser and, where PyTorch is installed, that the PyTorch
model's NHWC filter mapping computes a cross-correlation as kiln.conv2d
defines it (against a loop written from its definition) on a small batch.
"""

import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_losses import (KilnData, add_training_arguments, compare_initial,  # noqa: E402
                            parse_kiln_run_losses, read_safetensors, relative,
                            run, scheduled_lr)

FIELDS = ("images", "labels")
EVAL_LINE = re.compile(r"^evaluated \S+ on (\d+) batches of (\d+) records of [^:]*:(.*)$", re.M)

# The ops of digits_cnn.mlir in order; the PyTorch model is written for this
# sequence and the parser refuses any other.
OPS = ["reshape", "conv2d", "batch_norm", "relu", "conv2d", "batch_norm", "relu",
       "max_pool2d", "conv2d", "batch_norm", "relu", "reduce_mean", "matmul", "add",
       "cross_entropy", "argmax", "compare", "cast", "reduce_mean"]


def ints(text):
    return [int(v) for v in re.findall(r"-?\d+", text)]


def parse_model(text):
    """The CNN's parameters, state and op attributes, read from its .mlir."""
    cfg = {}
    args = re.findall(r'%(\w+): tensor<([0-9x]+)x(f32|i32)> \{kiln\.(param|state) = [^}]*'
                      r'kiln\.name = "(\w+)"', text)
    cfg["params"] = {name: ints(shape.replace("x", " ")) for _, shape, _, kind, name in args
                     if kind == "param"}
    cfg["state"] = {name: ints(shape.replace("x", " ")) for _, shape, _, kind, name in args
                    if kind == "state"}
    ops = re.findall(r"^\s*%[\w, %]+= kiln\.(\w+) ([^\n]*)", text, re.M)
    names = [op for op, _ in ops]
    if names != OPS:
        raise ValueError(f"unexpected op sequence {names}; the PyTorch model is written for {OPS}")
    images = re.search(r'%images: tensor<(\d+)x1x(\d+)x(\d+)xf32>', text)
    if not images:
        raise ValueError("expected images [B, 1, H, W]")
    cfg["batch"] = int(images.group(1))
    cfg["convs"], cfg["norms"], cfg["pools"] = [], [], []
    layer = 0
    for op, rest in ops:
        if op == "conv2d":
            layer += 1
            if "layout = nhwc" not in rest or "dilation" in rest or "groups" in rest:
                raise ValueError(f"conv2d: expected nhwc without dilation or groups: {rest}")
            weight = re.match(r"%\w+, %(\w+) ", rest)
            if not weight or re.match(r"%\w+, %\w+, %", rest):
                raise ValueError("conv2d: the PyTorch model has no conv bias")
            stride = re.search(r"stride = \[([^\]]*)\]", rest)
            padding = re.search(r"padding = \[([^\]]*)\]", rest)
            pad = ints(padding.group(1)) if padding else [0, 0, 0, 0]
            if pad[0] != pad[1] or pad[2] != pad[3]:
                raise ValueError(f"conv2d: asymmetric padding {pad}")
            cfg["convs"].append({"weight": weight.group(1),
                                 "stride": ints(stride.group(1)) if stride else [1, 1],
                                 "padding": [pad[0], pad[2]]})
        elif op == "batch_norm":
            m = re.match(r"%\w+, %(\w+), %(\w+) running %(\w+), %(\w+) momentum = ([0-9.e+-]+)"
                         r" dim = 3 eps = ([0-9.e+-]+)", rest)
            if not m:
                raise ValueError(f"batch_norm: expected running statistics, dim 3, eps: {rest}")
            cfg["norms"].append({"weight": m.group(1), "bias": m.group(2),
                                 "mean": m.group(3), "var": m.group(4),
                                 "momentum": float(m.group(5)), "eps": float(m.group(6))})
        elif op == "max_pool2d":
            if "layout = nhwc" not in rest or "padding" in rest:
                raise ValueError(f"max_pool2d: expected nhwc without padding: {rest}")
            cfg["pools"].append({"after": layer,
                                 "kernel": ints(re.search(r"kernel = \[([^\]]*)\]", rest).group(1)),
                                 "stride": ints(re.search(r"stride = \[([^\]]*)\]", rest).group(1))})
    mean = [rest for op, rest in ops if op == "reduce_mean"][0]
    if "dims = [1, 2] :" not in mean:
        raise ValueError(f"expected a global average pool over H and W: {mean}")
    head = re.search(r"kiln\.matmul %\w+, %(\w+) ", text).group(1)
    bias = re.search(r"kiln\.add %\w+, %(\w+) ", text).group(1)
    cfg["head"] = (head, bias)
    if re.search(r"kiln\.cross_entropy [^\n]*label_smoothing", text):
        raise ValueError("the PyTorch model has no label smoothing")
    # The kiln.name of each argument, by its SSA name.
    cfg["names"] = {ssa: name for ssa, _, _, _, name in args}
    return cfg


def parse_evaluation(text):
    """(batches, batch size, {output: mean}) from kiln-run's evaluation line."""
    m = EVAL_LINE.findall(text)
    if not m:
        return 0, 0, {}
    batches, size, rest = m[-1]
    words = rest.split()
    return int(batches), int(size), {words[i]: float(words[i + 1])
                                     for i in range(0, len(words) - 1, 2)}


# ---------------------------------------------------------------------------
# PyTorch.

def torch_logits(P, S, images, cfg, training):
    """The logits of `images` [B, 1, H, W]; batch norm on the batch's
    statistics, updating the running statistics S in place (training), or on
    S (eval)."""
    import torch.nn.functional as F
    n = cfg["names"]
    # NHWC with one channel is the NCHW view: compute in NCHW, where the NHWC
    # filters [O, KH, KW, C] are [O, C, KH, KW] after a permutation.
    h = images
    for i, (conv, norm) in enumerate(zip(cfg["convs"], cfg["norms"]), start=1):
        w = P[n[conv["weight"]]].permute(0, 3, 1, 2)
        h = F.conv2d(h, w, stride=conv["stride"], padding=conv["padding"])
        h = F.batch_norm(h, S[n[norm["mean"]]], S[n[norm["var"]]], P[n[norm["weight"]]],
                         P[n[norm["bias"]]], training=training, momentum=norm["momentum"],
                         eps=norm["eps"])
        h = F.relu(h)
        for pool in cfg["pools"]:
            if pool["after"] == i:
                h = F.max_pool2d(h, pool["kernel"], pool["stride"])
    g = h.mean(dim=(2, 3))
    w, b = cfg["head"]
    return g @ P[n[w]] + P[n[b]]


def torch_loss(P, S, images, labels, cfg, training=True):
    import torch.nn.functional as F
    logits = torch_logits(P, S, images, cfg, training)
    return F.cross_entropy(logits, labels.long()), logits


def batch_tensors(data, first, count, device):
    import torch
    raw = bytearray(data.records(first, count))
    words = torch.frombuffer(raw, dtype=torch.int32).reshape(count, data.record_bytes // 4)
    out = {}
    for name, dtype, shape, offset, nbytes in data.fields:
        if name in FIELDS:
            t = words[:, offset // 4:(offset + nbytes) // 4].reshape([count] + shape)
            if dtype == "f32":
                t = t.contiguous().view(torch.float32)
            out[name] = t.to(device)
    return out["images"], out["labels"]


def load_tensors(source, names, device, dtype=None):
    import torch
    out = {}
    for name in names:
        st_dtype, shape, raw = source[name]
        if st_dtype != "F32":
            raise ValueError(f"{name}: {st_dtype}, the comparison runs in f32")
        t = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape).to(device)
        out[name] = t.to(dtype) if dtype is not None else t
    return out


def train_torch(cfg, init, train, args):
    import torch
    P = {n: t.requires_grad_(True) for n, t in load_tensors(init, cfg["params"], args.device).items()}
    S = load_tensors(init, cfg["state"], args.device)
    opt = torch.optim.AdamW(list(P.values()), lr=0.0, betas=(args.beta1, args.beta2),
                            eps=args.epsilon, weight_decay=args.weight_decay)
    B = cfg["batch"]
    usable = train.record_count // B * B
    losses = {}
    start = time.time()
    for step in range(args.steps):
        images, labels = batch_tensors(train, (step * B) % usable, B, args.device)
        for group in opt.param_groups:
            group["lr"] = scheduled_lr(args.lr, step, args.warmup, args.steps)
        opt.zero_grad(set_to_none=True)
        loss, _ = torch_loss(P, S, images, labels, cfg)
        loss.backward()
        opt.step()
        losses[step + 1] = float(loss.item())
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            print(f"torch step {step + 1}/{args.steps}  loss {losses[step + 1]:.6g}  "
                  f"{(step + 1) / (time.time() - start):.1f} steps/s", flush=True)
    return losses, {n: p.detach() for n, p in P.items()}, S


def evaluate_torch(cfg, P, S, heldout, count, device):
    """Mean loss and accuracy over the first `count` held-out records, batch
    norm on the running statistics (model.eval()): each record's result
    depends on that record alone."""
    import torch
    import torch.nn.functional as F
    images, labels = batch_tensors(heldout, 0, count, device)
    with torch.no_grad():
        logits = torch_logits(P, S, images, cfg, training=False)
        loss = float(F.cross_entropy(logits, labels.long()).item())
        correct = int((logits.argmax(dim=1) == labels.long()).sum().item())
    return loss, correct


def check_forward(cfg, drawn, expected_path, device):
    """The PyTorch loss at kiln-ref's parameters and random inputs against
    kiln-ref's f64 loss; returns the failures."""
    import torch
    ref = struct.unpack("<f", read_safetensors(expected_path)["loss"][2])[0]
    images = load_tensors(drawn, ["images"], device)["images"]
    dt, shape, raw = drawn["labels"]
    labels = torch.frombuffer(bytearray(raw), dtype=torch.int32).reshape(shape).to(device)
    failures = []
    for dtype, bound in ((torch.float32, 1e-5), (torch.float64, 1e-6)):
        P = load_tensors(drawn, cfg["params"], device, dtype)
        S = load_tensors(drawn, cfg["state"], device, dtype)
        with torch.no_grad():
            loss, _ = torch_loss(P, S, images.to(dtype), labels, cfg)
        value = float(loss.item())
        err = relative(value, ref)
        ok = err <= bound
        name = str(dtype).split(".")[-1]
        print(f"forward check ({name}): torch loss {value:.9g}, kiln-ref f64 {ref:.9g}, "
              f"rel err {err:.2e} (bound {bound:g}): {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"forward check in {name}")
    return failures


# ---------------------------------------------------------------------------
# kiln.

def train_kiln(args, artifact, eval_artifact, steps, name):
    """kiln-run's per-step losses, held-out evaluation (batches, batch size,
    means) and checkpoint; no evaluation for 0 steps."""
    log = os.path.join(args.workdir, f"{name}.log")
    if os.path.exists(log):
        os.remove(log)
    checkpoint = os.path.join(args.workdir, f"{name}.safetensors")
    run([args.kiln_run, artifact, "--steps", str(steps), "--dataset", args.train,
         "--batch-fields", ",".join(FIELDS), "--no-shuffle", "--lr", str(args.lr),
         "--schedule", "cosine", "--warmup", str(args.warmup),
         "--schedule-steps", str(args.steps), "--seed", str(args.seed),
         "--log-every", "1", "--checkpoint", checkpoint], log)
    if steps == 0:
        return {}, None, checkpoint
    text = run([args.kiln_run, eval_artifact, "--params", checkpoint, "--dataset",
                args.heldout, "--batch-fields", ",".join(FIELDS)], log)
    batches, size, means = parse_evaluation(text)
    if "accuracy" not in means:
        sys.exit(f"no evaluation line with an accuracy in {log}")
    return parse_kiln_run_losses(open(log).read()), (batches, size, means), checkpoint


def write_safetensors(path, tensors):
    """Writes {name: (dtype, shape, bytes)} (read_safetensors' form)."""
    header, offset = {}, 0
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for _, _, raw in tensors.values():
            f.write(raw)


def field_tensor(data, first, count, name):
    """Field `name` of records [first, first + count) as (dtype, shape, bytes)."""
    raw = data.records(first, count)
    for fname, dtype, shape, offset, nbytes in data.fields:
        if fname == name:
            parts = [raw[r * data.record_bytes + offset:r * data.record_bytes + offset + nbytes]
                     for r in range(count)]
            return ({"f32": "F32", "i32": "I32"}[dtype], [count] + shape, b"".join(parts))
    raise KeyError(name)


def train_kiln_ref(args, cfg, ir, eval_ir, steps):
    """The kiln side on the CPU reference: kiln-ref runs the train_step entry
    of IR (kilnc --emit=mlir: the fused entries the GPU code is generated
    from) step by step from --params, then the forward entry of EVAL_IR on
    the held-out batches. Returns the losses and the evaluation as
    train_kiln does."""
    if not args.params:
        sys.exit("--kiln-ref needs --params (the initial parameters)")
    train, heldout = KilnData(args.train), KilnData(args.heldout)
    drawn = read_safetensors(args.params)
    state = {n: drawn[n] for n in list(cfg["params"]) + list(cfg["state"])}
    for n in cfg["params"]:
        zeros = (drawn[n][0], drawn[n][1], bytes(len(drawn[n][2])))
        state["adam_m." + n] = state["adam_v." + n] = zeros
    B = cfg["batch"]
    usable = train.record_count // B * B
    inputs = os.path.join(args.workdir, "kiln_ref_inputs.safetensors")
    outputs = os.path.join(args.workdir, "kiln_ref_outputs.safetensors")
    losses = {}
    start = time.time()
    for step in range(steps):
        first = (step * B) % usable
        batch = {name: field_tensor(train, first, B, name) for name in FIELDS}
        lr = scheduled_lr(args.lr, step, args.warmup, args.steps)
        write_safetensors(inputs, {**state, **batch, "lr": ("F32", [], struct.pack("<f", lr)),
                                   "step": ("I32", [], struct.pack("<i", step + 1))})
        proc = subprocess.run([args.kiln_ref, ir, "--function", "train_step", "--inputs", inputs,
                               "-o", outputs], capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"kiln-ref failed at step {step + 1}:\n{proc.stdout}{proc.stderr}")
        result = read_safetensors(outputs)
        losses[step + 1] = struct.unpack("<f", result.pop("loss")[2])[0]
        state.update(result)
        if (step + 1) % args.log_every == 0 or step + 1 == steps:
            print(f"kiln-ref step {step + 1}/{steps}  loss {losses[step + 1]:.6g}  "
                  f"{(step + 1) / (time.time() - start):.2f} steps/s", flush=True)
    # The evaluation batch: the images [N, 1, H, W] are the IR's only
    # tensors of that form.
    size = int(re.search(r"tensor<(\d+)x1x\d+x\d+xf32>", open(eval_ir).read()).group(1))
    batches = heldout.record_count // size
    sums = {}
    for b in range(batches):
        batch = {name: field_tensor(heldout, b * size, size, name) for name in FIELDS}
        write_safetensors(inputs, {**{n: state[n] for n in list(cfg["params"]) + list(cfg["state"])},
                                   **batch})
        subprocess.run([args.kiln_ref, eval_ir, "--function", "forward", "--inputs", inputs, "-o",
                        outputs], check=True, capture_output=True)
        for name, (dtype, shape, raw) in read_safetensors(outputs).items():
            if dtype == "F32" and not shape:
                sums[name] = sums.get(name, 0.0) + struct.unpack("<f", raw)[0] / batches
    return losses, (batches, size, sums)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_training_arguments(p, steps=500, lr=3e-3, warmup=25, tolerance=1e-3)
    p.add_argument("--eval-artifact")
    p.add_argument("--bf16-eval-artifact")
    p.add_argument("--train")
    p.add_argument("--heldout")
    p.add_argument("--strict-steps", type=int, default=30,
                   help="steps whose losses are bounded by --tolerance")
    p.add_argument("--accuracy-above", type=float, default=0.98)
    p.add_argument("--accuracy-tolerance", type=float, default=0.02)
    p.add_argument("--table-steps", type=int, default=50,
                   help="steps shown in the loss table (all are in losses.md)")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--device", default="cuda")
    p.add_argument("--torch-only", action="store_true")
    p.add_argument("--kiln-ref", help="run the kiln side on the CPU reference with this "
                   "kiln-ref; --artifact and --eval-artifact are then kilnc --emit=mlir outputs")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test(args.model)
    if args.kiln_ref and (args.torch_only or args.bf16_artifact):
        p.error("--kiln-ref runs the f32 kiln side: no --torch-only or --bf16-artifact")
    required = ["model", "train", "heldout", "workdir"] + (
        [] if args.torch_only else ["artifact", "eval_artifact"])
    for name in required:
        if getattr(args, name) is None:
            p.error(f"--{name.replace('_', '-')} is required")
    if args.bf16_artifact and not args.bf16_eval_artifact:
        p.error("--bf16-artifact needs --bf16-eval-artifact")
    os.makedirs(args.workdir, exist_ok=True)
    with open(args.model) as f:
        cfg = parse_model(f.read())
    train, heldout = KilnData(args.train), KilnData(args.heldout)
    print(f"{args.model}: {len(cfg['convs'])} conv + batch norm + ReLU layers, batch "
          f"{cfg['batch']}, {sum(math.prod(s) for s in cfg['params'].values())} parameters; "
          f"{args.steps} steps ({args.steps * cfg['batch'] / train.record_count:.1f} epochs of "
          f"{train.record_count} records in file order), peak lr {args.lr:g}, warm-up "
          f"{args.warmup}, cosine to 0; {heldout.record_count} held-out records")

    failures = []
    init = os.path.join(args.workdir, "kiln_init.safetensors")
    kiln = bf16 = {}
    kiln_eval = bf16_eval = None
    if args.kiln_ref:
        kiln, kiln_eval = train_kiln_ref(args, cfg, args.artifact, args.eval_artifact, args.steps)
        init = args.params
    elif not args.torch_only:
        _, _, init = train_kiln(args, args.artifact, None, 0, "kiln_init")
        if args.params:
            worst, name = compare_initial(read_safetensors(args.params), read_safetensors(init),
                                          list(cfg["params"]) + list(cfg["state"]), args.params)
            if not worst <= 1e-5:
                failures.append(f"kiln-run's initial parameters differ from {args.params} "
                                f"by up to {worst:.2e} ({name})")
        kiln, kiln_eval, _ = train_kiln(args, args.artifact, args.eval_artifact, args.steps,
                                        "kiln_f32")
        if args.bf16_artifact:
            bf16, bf16_eval, _ = train_kiln(args, args.bf16_artifact, args.bf16_eval_artifact,
                                            args.steps, "kiln_bf16")
    elif not os.path.exists(init):
        if not args.params:
            sys.exit("--torch-only needs --params or DIR/kiln_init.safetensors")
        init = args.params

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("compare_digits.py: no CUDA device (--device cpu runs on the CPU)")
    if args.device.startswith("cuda"):
        # Deterministic convolution algorithms, as close to plain f32 sums as
        # cuDNN has.
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    if args.expected and args.params:
        failures += check_forward(cfg, read_safetensors(args.params), args.expected, args.device)
    start = time.time()
    torch_losses, P, S = train_torch(cfg, read_safetensors(init), train, args)
    torch_seconds = time.time() - start
    # The records kiln-run evaluated (whole batches of the evaluation
    # artifact), else all of them.
    counted = kiln_eval[0] * kiln_eval[1] if kiln_eval else heldout.record_count
    torch_heldout_loss, torch_correct = evaluate_torch(cfg, P, S, heldout, counted, args.device)

    ours = kiln if not args.torch_only else torch_losses
    who = "torch" if args.torch_only else "kiln-ref" if args.kiln_ref else "kiln-run"
    if args.reference_log:
        with open(args.reference_log) as f:
            reference = parse_kiln_run_losses(f.read())
        if not reference:
            failures.append(f"no losses in {args.reference_log}")
        worst_reference = 0.0
        for step, value in sorted(reference.items()):
            k = ours.get(step)
            err = relative(k, value) if k is not None else float("inf")
            if step <= args.strict_steps:
                ok = err <= args.tolerance
                if not ok:
                    failures.append(f"step {step} against the CPU reference")
                if step <= 10 or not ok:
                    print(f"step {step}: {who} {k}, CPU "
                          f"reference {value}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
            worst_reference = max(worst_reference, err)
        print(f"{who} against the CPU reference over "
              f"{len(reference)} logged steps: largest relative difference "
              f"{worst_reference:.2e} (bound {args.tolerance:g} up to step {args.strict_steps})")

    header = "| step | lr | torch f32 |" + (" kiln f32 | rel err |" if kiln else "") + \
        (" kiln bf16 | rel err |" if bf16 else "")
    lines = [header, "|---:|---:|---:|" + ("---:|---:|" if kiln else "") + ("---:|---:|" if bf16 else "")]
    worst_strict = worst_all = 0.0
    for step in range(1, args.steps + 1):
        t = torch_losses[step]
        row = f"| {step} | {scheduled_lr(args.lr, step - 1, args.warmup, args.steps):.3e} | {t:.6g} |"
        for losses, is_f32 in ((kiln, True), (bf16, False)):
            if losses:
                k = losses.get(step)
                err = relative(k, t) if k is not None else float("inf")
                if is_f32:
                    worst_all = max(worst_all, err)
                    if step <= args.strict_steps:
                        worst_strict = max(worst_strict, err)
                row += f" {k if k is not None else 'missing'} | {err:.2e} |"
        lines.append(row)
    with open(os.path.join(args.workdir, "losses.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    shown = lines[:2 + args.table_steps]
    if args.steps > args.table_steps:
        shown += lines[-1:]
    print("\n".join(shown))
    print(f"torch trained {args.steps} steps in {torch_seconds:.1f} s on {args.device}")

    torch_accuracy = torch_correct / counted
    print(f"held-out, {counted} records of {args.heldout}:")
    print(f"  torch f32  accuracy {torch_accuracy:.4f} ({torch_correct} correct), "
          f"loss {torch_heldout_loss:.6g}")
    ok = True
    if kiln_eval is not None:
        means = kiln_eval[2]
        accuracy = means["accuracy"]
        diff = abs(accuracy - torch_accuracy)
        ok = worst_strict <= args.tolerance
        if not ok:
            failures.append(f"per-step losses of the first {args.strict_steps} steps differ "
                            f"by up to {worst_strict:.2e} (bound {args.tolerance:g})")
        if not accuracy > args.accuracy_above:
            failures.append(f"kiln's held-out accuracy {accuracy:.4f} is not above "
                            f"{args.accuracy_above:g}")
        if not diff <= args.accuracy_tolerance:
            failures.append(f"held-out accuracies of kiln {accuracy:.4f} and torch "
                            f"{torch_accuracy:.4f} differ by {diff:.4f} (bound "
                            f"{args.accuracy_tolerance:g})")
        print(f"  kiln f32   accuracy {accuracy:.4f} ({round(accuracy * counted)} correct), "
              f"loss {means['loss']:.6g}; accuracy difference {diff:.4f} (bound "
              f"{args.accuracy_tolerance:g})")
        print(f"  per-step training losses (f32): largest relative difference "
              f"{worst_strict:.2e} over the first {args.strict_steps} steps (bound "
              f"{args.tolerance:g}), {worst_all:.2e} over all {args.steps}")
    if bf16_eval is not None:
        means = bf16_eval[2]
        print(f"  kiln bf16  accuracy {means['accuracy']:.4f} "
              f"({round(means['accuracy'] * counted)} correct), loss {means['loss']:.6g} "
              f"(no bound)")
    elif args.torch_only and not torch_accuracy > args.accuracy_above:
        failures.append(f"torch's held-out accuracy {torch_accuracy:.4f} is not above "
                        f"{args.accuracy_above:g}")
    for failure in failures:
        print(f"FAIL: {failure}")
    ok = not failures
    if kiln_eval is not None:
        print(f"{'PASS' if ok else 'FAIL'}: kiln held-out accuracy {kiln_eval[2]['accuracy']:.4f}, "
              f"torch {torch_accuracy:.4f}; first {args.strict_steps} steps' losses within "
              f"{worst_strict:.2e}")
    else:
        print(f"{'PASS' if ok else 'FAIL'}: torch held-out accuracy {torch_accuracy:.4f} "
              f"(bound > {args.accuracy_above:g})")
    return 0 if ok else 1


def self_test(model):
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [model] if model else [os.path.join(here, "..", "digits_cnn.mlir"),
                                   os.path.join(here, "digits_cnn.mlir")]
    paths = [path for path in paths if os.path.exists(path)]
    assert paths, "no digits_cnn.mlir found (--model)"
    with open(paths[0]) as f:
        cfg = parse_model(f.read())
    assert len(cfg["convs"]) == len(cfg["norms"]) == 3, cfg
    assert len(cfg["state"]) == 6 and len(cfg["pools"]) == 1, cfg
    print(f"{paths[0]}: batch {cfg['batch']}, convs {cfg['convs']}, pools {cfg['pools']}, "
          f"{len(cfg['params'])} parameters, {len(cfg['state'])} running statistics")
    text = ("evaluated forward on 1 batches of 179 records of digits_heldout.kilndata: "
            "accuracy 0.988827 loss 0.0412\n")
    assert parse_evaluation(text) == (1, 179, {"accuracy": 0.988827, "loss": 0.0412})
    try:
        import torch
    except ImportError:
        print("PyTorch not installed: the model's shapes and layouts are not checked")
        print("self-test passed")
        return 0
    import torch.nn.functional as F
    gen = torch.Generator().manual_seed(0)
    # The filter mapping: kiln.conv2d nhwc with filters [O, KH, KW, C] is
    # y[n, oh, ow, o] = sum_{kh, kw, c} x[n, oh*s + kh - pad, ow*s + kw - pad, c]
    # * w[o, kh, kw, c]; F.conv2d on the NCHW view with the permuted filter
    # must give it.
    x = torch.randn(2, 5, 6, 3, generator=gen, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 3, generator=gen, dtype=torch.float64)
    y = F.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2), padding=1).permute(0, 2, 3, 1)
    xp = F.pad(x, (0, 0, 1, 1, 1, 1))
    loop = torch.zeros(2, 5, 6, 4, dtype=torch.float64)
    for kh in range(3):
        for kw in range(3):
            loop += torch.einsum("nhwc,oc->nhwo", xp[:, kh:kh + 5, kw:kw + 6, :], w[:, kh, kw, :])
    assert torch.allclose(y, loop, atol=1e-12), (y - loop).abs().max()
    # The whole model on a small batch: shapes, and running statistics that
    # move in training and stay in eval.
    P = {n: torch.randn(s, generator=gen) * 0.3 for n, s in cfg["params"].items()}
    S = {n: (torch.ones(s) if "var" in n else torch.zeros(s)) for n, s in cfg["state"].items()}
    images = torch.rand(4, 1, 8, 8, generator=gen)
    labels = torch.randint(0, 10, (4,), generator=gen, dtype=torch.int32)
    loss, logits = torch_loss(P, S, images, labels, cfg)
    assert logits.shape == (4, 10) and math.isfinite(float(loss)), logits.shape
    moved = {n: t.clone() for n, t in S.items()}
    assert any(not torch.equal(t, torch.ones_like(t) if "var" in n else torch.zeros_like(t))
               for n, t in S.items()), "training left the running statistics"
    torch_loss(P, S, images, labels, cfg, training=False)
    assert all(torch.equal(S[n], moved[n]) for n in S), "eval changed the running statistics"
    print("PyTorch model: conv filter mapping and shapes ok")
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
