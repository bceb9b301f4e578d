#!/usr/bin/env python3
"""The first training steps of a token sample in kiln and in PyTorch, side by side.

    compare_losses.py --model MODEL.mlir --artifact MODEL.kiln --data TRAIN.kilndata
        --params PARAMS.safetensors --workdir DIR [--kiln-run ./kiln-run]
        [--steps 50] [--lr 1e-3] [--warmup 100] [--schedule-steps 1500]
        [--seed 1] [--tolerance 1e-3] [--bf16-artifact MODEL_BF16.kiln]
        [--expected EXPECTED.safetensors] [--reference-log REFERENCE.log]

MODEL.mlir is samples/transformer_classifier.mlir or samples/byte_lm.mlir with
every dropout rate set to 0, and MODEL.kiln its training artifact (kilnc with
its default AdamW: betas 0.9, 0.999, eps 1e-8, weight decay 0.01, no gradient
clipping or scaling). Dropout is off on both sides because kiln's masks
(Philox, counter based) and PyTorch's random generator draw different
numbers, so with dropout the two runs would train different functions.

1. kiln: kiln-run trains the artifact for --steps steps on TRAIN.kilndata in
   file order (--no-shuffle), with the warm-up and cosine schedule of a
   --schedule-steps run, and logs the loss of every step; a run of 0 steps
   first writes the parameters kiln-run starts from.
2. Those must be PARAMS.safetensors (kiln-ref --random-seed SEED --init-params
   drew them on the CPU) bit for bit: the CPU reference and the runtime share
   their initialisers.
3. With --expected (kiln-ref's f64 loss of MODEL.mlir at PARAMS and the inputs
   PARAMS also holds, as kiln-ref --save-inputs wrote them), the PyTorch model's
   loss there must match it (relative error under 1e-5 in f32, 1e-9 in f64):
   the two are the same function before any training.
4. PyTorch: the same model, written with torch.nn.functional
   (F.embedding, F.layer_norm, F.scaled_dot_product_attention(is_causal=True),
   F.gelu(approximate=...), F.cross_entropy(label_smoothing=...), with the
   attributes read from MODEL.mlir), starts from those parameters and trains
   on the same batches in the same order with torch.optim.AdamW under the
   same hyper-parameters and learning rates (each rounded to f32 as kiln-run
   passes it), in f32 without TF32.
5. A table of the per-step losses: |kiln - torch| / |torch| must stay within
   --tolerance at every step, else the exit status is 1. With
   --bf16-artifact, kiln's bf16 run (the same model compiled with
   --precision=bf16) is shown beside it, without a bound. With
   --reference-log (train_reference's log of its first steps on the CPU
   reference, from the same start), kiln-run's losses must also agree with
   those within --tolerance.

    python3 compare_losses.py --self-test

checks the file readers and the model-attribute parser without PyTorch.
"""

import argparse
import math
import os
import re
import struct
import subprocess
import sys
import json

# ---------------------------------------------------------------------------
# Files (standard library only).

SAFETENSORS_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "BOOL": 1, "F64": 8}


def read_safetensors(path):
    """{name: (dtype, shape, bytes)}, metadata dropped."""
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


DATASET_DTYPES = {1: ("f32", 4), 2: ("bf16", 2), 3: ("f16", 2), 4: ("i32", 4), 5: ("i1", 1)}


class KilnData:
    """A KILNDATA file (kiln/dataset.h): fields and raw records."""

    def __init__(self, path):
        with open(path, "rb") as f:
            blob = f.read()
        if blob[:8] != b"KILNDATA":
            raise ValueError(f"{path}: not a KILNDATA file")
        (version, count, self.record_bytes, self.record_count, data_offset,
         layout_bytes) = struct.unpack_from("<IIQQQQ", blob, 8)
        # Version 2 adds checksums after the data (kiln/dataset.h),
        # which kiln's reader checks; the records are laid out as in 1.
        if version not in (1, 2):
            raise ValueError(f"{path}: version {version}")
        self.fields = []  # (name, dtype, shape, offset, bytes)
        at, offset = 64, 0
        for _ in range(count):
            (length,) = struct.unpack_from("<H", blob, at)
            name = blob[at + 2:at + 2 + length].decode("utf-8")
            at += 2 + length
            code, rank = blob[at], blob[at + 1]
            shape = list(struct.unpack_from(f"<{rank}Q", blob, at + 2))
            at += 2 + 8 * rank
            dtype, size = DATASET_DTYPES[code]
            nbytes = size * math.prod(shape)
            self.fields.append((name, dtype, shape, offset, nbytes))
            offset += nbytes
        if offset != self.record_bytes:
            raise ValueError(f"{path}: fields of {offset} bytes, records of "
                             f"{self.record_bytes}")
        self.data = memoryview(blob)[data_offset:data_offset +
                                     self.record_bytes * self.record_count]

    def records(self, first, count):
        """Raw bytes of records [first, first + count)."""
        return bytes(self.data[first * self.record_bytes:
                               (first + count) * self.record_bytes])

    def field_values(self, first, count, name):
        """The i32 values of field `name` of those records, record by record."""
        for fname, dtype, shape, offset, nbytes in self.fields:
            if fname == name:
                if dtype != "i32":
                    raise ValueError(f"field {name} is {dtype}, not i32")
                raw = self.records(first, count)
                out = []
                for r in range(count):
                    start = r * self.record_bytes + offset
                    out.append(list(struct.unpack_from(f"<{nbytes // 4}i", raw, start)))
                return out
        raise KeyError(name)


STEP_LINE = re.compile(r"^step (\d+)/(\d+)\s+loss (\S+)", re.M)


def parse_kiln_run_losses(text):
    """{step: loss} from kiln-run's training log (one line per step)."""
    return {int(m.group(1)): float(m.group(3)) for m in STEP_LINE.finditer(text)}


# ---------------------------------------------------------------------------
# The model's attributes, read from its .mlir so that the PyTorch side cannot
# drift from it silently.

def parse_model(text):
    cfg = {}
    params = re.findall(r'%(\w+): tensor<([0-9x]+)xf32> \{kiln.param', text)
    cfg["params"] = {name: [int(d) for d in shape.split("x")] for name, shape in params}
    cfg["layers"] = len([n for n in cfg["params"] if re.fullmatch(r"l\d+_wq", n)])
    heads = re.search(r"kiln\.reshape %q0_0 : tensor<\d+x\d+x\d+xf32> -> "
                      r"tensor<\d+x\d+x(\d+)x(\d+)xf32>", text)
    cfg["heads"] = int(heads.group(1))
    eps = set(re.findall(r"kiln\.layer_norm [^\n]*eps = ([0-9.e+-]+)", text))
    if len(eps) != 1 or len(re.findall(r"kiln\.layer_norm ", text)) != 2 * cfg["layers"] + 1:
        raise ValueError(f"expected one eps on every layer_norm, got {eps}")
    cfg["eps"] = float(eps.pop())
    gelu = set(re.findall(r"kiln\.gelu [^\n]*?(?:approximate = (\w+))? :", text))
    if len(gelu) != 1:
        raise ValueError(f"expected one GELU form, got {gelu}")
    cfg["gelu"] = gelu.pop() or "none"
    attention = re.findall(r"kiln\.attention [^\n]*", text)
    if len(attention) != cfg["layers"] or not all(" causal" in a for a in attention):
        raise ValueError("expected one causal kiln.attention per block")
    if any("scale" in a for a in attention):
        raise ValueError("the PyTorch model assumes the default scale 1/sqrt(D)")
    smoothing = re.findall(r"kiln\.cross_entropy [^\n]*?label_smoothing = ([0-9.e+-]+)", text)
    cfg["label_smoothing"] = float(smoothing[0]) if smoothing else 0.0
    cfg["dropout_rates"] = [float(r) for r in re.findall(r"kiln\.dropout [^\n]*rate = ([0-9.e+-]+)", text)]
    cfg["classifier"] = '"labels"' in text
    return cfg


def scheduled_lr(peak, step, warmup, total):
    """kiln-run's ScheduledLr (--schedule cosine), rounded to f32 as it passes it."""
    if step < warmup:
        lr = peak * (step + 1) / warmup
    else:
        t = min(1.0, (step - warmup) / max(1, total - warmup))
        lr = peak * 0.5 * (1.0 + math.cos(math.pi * t))
    return struct.unpack("<f", struct.pack("<f", lr))[0]


# ---------------------------------------------------------------------------
# PyTorch.

def torch_loss(P, batch, cfg):
    import torch.nn.functional as F
    tokens = batch["tokens"].long()
    h = F.embedding(tokens, P["tok_emb"]) + P["pos_emb"]
    B, T, d = h.shape
    H = cfg["heads"]
    ln = lambda x, w, b: F.layer_norm(x, (d,), P[w], P[b], eps=cfg["eps"])
    for l in range(cfg["layers"]):
        p = f"l{l}_"
        a = ln(h, p + "ln1_w", p + "ln1_b")
        q, k, v = ((a @ P[p + w]).view(B, T, H, d // H).transpose(1, 2)
                   for w in ("wq", "wk", "wv"))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        h = h + (o.transpose(1, 2).reshape(B, T, d) @ P[p + "wo"] + P[p + "bo"])
        m = ln(h, p + "ln2_w", p + "ln2_b")
        u = F.gelu(m @ P[p + "w_up"] + P[p + "b_up"], approximate=cfg["gelu"])
        h = h + (u @ P[p + "w_down"] + P[p + "b_down"])
    if cfg["classifier"]:
        logits = ln(h[:, -1], "ln_f_w", "ln_f_b") @ P["w_head"] + P["b_head"]
        labels = batch["labels"].long()
    else:
        logits = (ln(h, "ln_f_w", "ln_f_b") @ P["w_head"] + P["b_head"]).reshape(B * T, -1)
        labels = batch["targets"].long().reshape(B * T)
    return F.cross_entropy(logits, labels, label_smoothing=cfg["label_smoothing"])


def torch_batch(data, first, count, device):
    import torch
    raw = bytearray(data.records(first, count))
    if any(size % 4 for _, _, _, _, size in data.fields) or data.record_bytes % 4:
        raise ValueError("the comparison reads fields of 4-byte elements only")
    words = torch.frombuffer(raw, dtype=torch.int32).reshape(count, data.record_bytes // 4)
    out = {}
    for name, dtype, shape, offset, nbytes in data.fields:
        t = words[:, offset // 4:(offset + nbytes) // 4].reshape([count] + shape)
        if dtype == "f32":
            t = t.contiguous().view(torch.float32)
        out[name] = t.to(device)
    return out


def train_torch(cfg, params, data, args, batch_size):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    device = "cuda"
    P = {}
    for name in cfg["params"]:
        dtype, shape, raw = params[name]
        if dtype != "F32":
            raise ValueError(f"{name}: {dtype}, the comparison runs in f32")
        P[name] = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(
            shape).to(device).requires_grad_(True)
    opt = torch.optim.AdamW(list(P.values()), lr=0.0, betas=(args.beta1, args.beta2),
                            eps=args.epsilon, weight_decay=args.weight_decay)
    losses = {}
    for step in range(args.steps):
        first = (step * batch_size) % (data.record_count // batch_size * batch_size)
        batch = torch_batch(data, first, batch_size, device)
        for group in opt.param_groups:
            group["lr"] = scheduled_lr(args.lr, step, args.warmup, args.schedule_steps)
        opt.zero_grad(set_to_none=True)
        loss = torch_loss(P, batch, cfg)
        loss.backward()
        opt.step()
        losses[step + 1] = float(loss.item())
    return losses, {name: p.detach() for name, p in P.items()}


# ---------------------------------------------------------------------------

def check_forward(cfg, drawn, expected_path):
    """The PyTorch model's loss at kiln-ref's parameters and inputs against
    kiln-ref's f64 loss; returns the failures."""
    import torch
    (dtype, shape, raw), = [v for k, v in read_safetensors(expected_path).items() if k == "loss"]
    ref = struct.unpack("<f", raw)[0]
    batch = {}
    for name in ("tokens", "labels", "targets"):
        if name in drawn:
            dt, sh, data = drawn[name]
            batch[name] = torch.frombuffer(bytearray(data), dtype=torch.int32).reshape(sh).cuda()
    results = []
    for dtype, bound in ((torch.float32, 1e-5), (torch.float64, 1e-6)):
        P = {n: torch.frombuffer(bytearray(drawn[n][2]), dtype=torch.float32).reshape(
            drawn[n][1]).cuda().to(dtype) for n in cfg["params"]}
        with torch.no_grad():
            value = float(torch_loss(P, batch, cfg).item())
        results.append((str(dtype).split(".")[-1], value, relative(value, ref), bound))
    failures = []
    for name, value, err, bound in results:
        ok = err <= bound
        print(f"forward check ({name}): torch loss {value:.9g}, kiln-ref f64 {ref:.9g}, "
              f"rel err {err:.2e} (bound {bound:g}): {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"forward check in {name}")
    return failures


def run_kiln(args, artifact, fields, steps, log_name, checkpoint):
    cmd = [args.kiln_run, artifact, "--steps", str(steps), "--dataset", args.data,
           "--batch-fields", ",".join(fields), "--no-shuffle", "--lr", str(args.lr),
           "--schedule", "cosine", "--warmup", str(args.warmup),
           "--schedule-steps", str(args.schedule_steps), "--seed", str(args.seed),
           "--log-every", "1", "--checkpoint", checkpoint]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    with open(os.path.join(args.workdir, log_name), "w") as f:
        f.write(text)
    if proc.returncode != 0:
        sys.exit(f"kiln-run failed (exit {proc.returncode}):\n{text}")
    return parse_kiln_run_losses(text)


def run(cmd, log_path):
    """Runs `cmd`, appending the command and its output to `log_path`; exits
    with the output when it fails. Returns the output."""
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    with open(log_path, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n" + text)
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} failed (exit {proc.returncode}):\n{text}")
    return text


def compare_initial(drawn, started, names, reference):
    """Prints and returns the largest difference (relative to the tensor's
    max |value|) of kiln-run's initial parameters `started` from kiln-ref's
    `drawn`, over the f32 tensors `names`, and the tensor where it is."""
    worst, worst_name, identical = 0.0, None, 0
    for name in names:
        if drawn[name] == started[name]:
            identical += 1
            continue
        a = struct.unpack(f"<{len(drawn[name][2]) // 4}f", drawn[name][2])
        b = struct.unpack(f"<{len(started[name][2]) // 4}f", started[name][2])
        scale = max(max(abs(v) for v in a), 1e-30)
        err = max(abs(x - y) for x, y in zip(a, b)) / scale
        if not err <= worst:  # NaN counts as the worst
            worst, worst_name = err, name
    print(f"kiln-run's initial parameters vs kiln-ref's ({reference}): "
          f"{identical} of {len(names)} tensors bit for bit, largest "
          f"difference {worst:.2e} of the tensor's max |value|"
          + (f" ({worst_name})" if worst_name else ""))
    return worst, worst_name


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def add_training_arguments(p, steps, lr, warmup, tolerance):
    """The arguments every comparison of kiln with PyTorch takes: the model,
    its artifacts and reference files, kiln-run, and AdamW's schedule."""
    p.add_argument("--model")
    p.add_argument("--artifact")
    p.add_argument("--bf16-artifact")
    p.add_argument("--params")
    p.add_argument("--expected")
    p.add_argument("--reference-log")
    p.add_argument("--workdir")
    p.add_argument("--kiln-run", default="./kiln-run")
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.999)
    p.add_argument("--epsilon", type=float, default=1e-8)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--tolerance", type=float, default=tolerance)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_training_arguments(p, steps=50, lr=1e-3, warmup=100, tolerance=1e-3)
    p.add_argument("--data")
    p.add_argument("--schedule-steps", type=int, default=1500)
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    for required in ("model", "artifact", "data", "params", "workdir"):
        if getattr(args, required) is None:
            p.error(f"--{required.replace('_', '-')} is required")
    os.makedirs(args.workdir, exist_ok=True)

    with open(args.model) as f:
        cfg = parse_model(f.read())
    if any(rate != 0 for rate in cfg["dropout_rates"]):
        sys.exit(f"{args.model}: dropout rates {cfg['dropout_rates']}; the "
                 "comparison needs them at 0")
    data = KilnData(args.data)
    fields = [name for name, *_ in data.fields]
    batch_size = int(re.search(r'%tokens: tensor<(\d+)x', open(args.model).read()).group(1))
    print(f"{args.model}: {cfg['layers']} blocks, {cfg['heads']} heads, layer_norm eps "
          f"{cfg['eps']}, GELU {cfg['gelu']}, label smoothing {cfg['label_smoothing']}, "
          f"{'classifier (last position)' if cfg['classifier'] else 'language model'}, "
          f"batch {batch_size}, {sum(math.prod(s) for s in cfg['params'].values())} parameters")

    init = os.path.join(args.workdir, "kiln_init.safetensors")
    run_kiln(args, args.artifact, fields, 0, "kiln_init.log", init)
    failures = []
    # kiln-run draws the parameters on the GPU, kiln-ref on the CPU, from the
    # same initialisers and seed; the transcendental functions of the two
    # may differ in the last bit. Both trainings below start from what
    # kiln-run drew (torch loads it), so this only guards the initialisers.
    drawn, started = read_safetensors(args.params), read_safetensors(init)
    worst, worst_name = compare_initial(drawn, started, cfg["params"], args.params)
    if not worst <= 1e-5:
        failures.append(f"kiln-run's initial parameters differ from {args.params} "
                        f"by up to {worst:.2e} ({worst_name})")
        print("FAIL " + failures[-1])
    kiln = run_kiln(args, args.artifact, fields, args.steps, "kiln_f32.log",
                    os.path.join(args.workdir, "kiln_f32_final.safetensors"))
    bf16 = {}
    if args.bf16_artifact:
        bf16 = run_kiln(args, args.bf16_artifact, fields, args.steps, "kiln_bf16.log",
                        os.path.join(args.workdir, "kiln_bf16_final.safetensors"))

    import torch
    if not torch.cuda.is_available():
        sys.exit("compare_losses.py: no CUDA device")
    if args.expected:
        failures += check_forward(cfg, drawn, args.expected)
    torch_losses, torch_params = train_torch(cfg, started, data, args, batch_size)

    reference = {}
    if args.reference_log:
        with open(args.reference_log) as f:
            reference = parse_kiln_run_losses(f.read())
        if not reference:
            failures.append(f"no losses in {args.reference_log}")
        for step, value in sorted(reference.items()):
            err = relative(kiln.get(step, float("inf")), value)
            ok = err <= args.tolerance
            print(f"step {step}: kiln-run {kiln.get(step)}, CPU reference {value}: "
                  f"rel err {err:.2e} {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"kiln-run against the CPU reference at step {step}")

    header = "| step | lr | kiln f32 | torch f32 | rel err |" + (" kiln bf16 | rel err |" if bf16 else "")
    lines = [header, "|---:|---:|---:|---:|---:|" + ("---:|---:|" if bf16 else "")]
    worst = 0.0
    for step in range(1, args.steps + 1):
        k, t = kiln.get(step), torch_losses[step]
        err = relative(k, t) if k is not None else float("inf")
        worst = max(worst, err)
        row = (f"| {step} | {scheduled_lr(args.lr, step - 1, args.warmup, args.schedule_steps):.3e} "
               f"| {k if k is not None else 'missing'} | {t:.6g} | {err:.2e} |")
        if bf16:
            b = bf16.get(step)
            row += f" {b} | {relative(b, t):.2e} |" if b is not None else " missing | |"
        lines.append(row)
    print("\n".join(lines))
    with open(os.path.join(args.workdir, "losses.md"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # Where the parameters ended up (for diagnosis; not part of the bound).
    final = read_safetensors(os.path.join(args.workdir, "kiln_f32_final.safetensors"))
    drift = []
    for name, t in torch_params.items():
        dtype, shape, raw = final[name]
        k = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape).to(t.device)
        drift.append((float((k - t).norm() / t.norm().clamp_min(1e-30)), name))
    drift.sort(reverse=True)
    print("parameters after the last step, relative L2 difference kiln vs torch (largest 3): "
          + ", ".join(f"{n} {d:.2e}" for d, n in drift[:3]))

    for failure in failures:
        print(f"FAIL: {failure}")
    ok = worst <= args.tolerance and not failures
    print(f"{'PASS' if worst <= args.tolerance else 'FAIL'}: the largest relative "
          f"difference of the per-step losses over {args.steps} steps is {worst:.2e} "
          f"(bound {args.tolerance:g})")
    return 0 if ok else 1


def self_test():
    import tempfile
    line = ("step 1/50  loss 1.79588  lr 1e-05  3.2 steps/s  ETA 15.3s\n"
            "step 2/50  loss 1.79012  lr 2e-05  6.1 steps/s  ETA 8s\n"
            "trained steps 1..50 in 1.2s: first loss 1.79588, final loss 1.7\n")
    assert parse_kiln_run_losses(line) == {1: 1.79588, 2: 1.79012}
    assert scheduled_lr(1e-3, 0, 100, 1500) == struct.unpack("<f", struct.pack("<f", 1e-5))[0]
    assert abs(scheduled_lr(1e-3, 100, 100, 1500) - 1e-3) < 1e-10
    assert scheduled_lr(1e-3, 1500, 100, 1500) == 0.0
    with tempfile.TemporaryDirectory() as d:
        # A KILNDATA file of two records: tokens [3] i32, labels [] i32.
        layout = b""
        for name, shape in (("tokens", [3]), ("labels", [])):
            layout += struct.pack("<H", len(name)) + name.encode() + bytes([4, len(shape)])
            layout += b"".join(struct.pack("<Q", s) for s in shape)
        header = b"KILNDATA" + struct.pack("<IIQQQQQQ", 1, 2, 16, 2, 128, len(layout), 0, 0)
        blob = header + layout
        blob += b"\0" * (128 - len(blob)) + struct.pack("<8i", 1, 2, 3, 4, 5, 6, 7, 8)
        path = os.path.join(d, "t.kilndata")
        with open(path, "wb") as f:
            f.write(blob)
        data = KilnData(path)
        assert data.record_count == 2 and data.record_bytes == 16
        assert data.fields == [("tokens", "i32", [3], 0, 12), ("labels", "i32", [], 12, 4)]
        assert data.field_values(0, 2, "labels") == [[4], [8]]
        assert data.field_values(1, 1, "tokens") == [[5, 6, 7]]
    here = os.path.dirname(os.path.abspath(__file__))
    for name, classifier, smoothing in (("transformer_classifier", True, 0.1),
                                        ("byte_lm", False, 0.0)):
        for path in (os.path.join(here, "..", f"{name}.mlir"), os.path.join(here, f"{name}.mlir")):
            if os.path.exists(path):
                with open(path) as f:
                    cfg = parse_model(f.read())
                assert cfg["classifier"] == classifier and cfg["heads"] == 4, cfg
                assert cfg["gelu"] == "tanh" and cfg["eps"] == 1e-5, cfg
                assert cfg["label_smoothing"] == smoothing, cfg
                assert len(cfg["dropout_rates"]) == 2 * cfg["layers"], cfg
                print(f"{path}: {cfg['layers']} blocks, {len(cfg['params'])} parameters")
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
