#!/usr/bin/env python3
"""A recurrent byte-level language model trained in kiln and in PyTorch, compared on held-out data.

    compare_rnn_lm.py --model MODEL.mlir --artifact MODEL.kiln --train TRAIN.kilndata
        --heldout HELDOUT.kilndata --workdir DIR [--kiln-run ./kiln-run]
        [--steps 600] [--lr 2e-3] [--warmup 50] [--seed 1] [--tolerance 0.02]
        [--params PARAMS.safetensors] [--expected EXPECTED.safetensors]
        [--reference-log REFERENCE.log] [--bf16-artifact MODEL_BF16.kiln]
        [--device cuda] [--torch-only]

MODEL.mlir is samples/byte_lm_lstm.mlir or samples/byte_lm_slstm.mlir
(tokens -> embedding -> x @ w_x reshaped to Wx [B, T, 4, NH, D] -> kiln.rnn
from zero states -> h @ w_head + b_head -> cross entropy with the next bytes),
MODEL.kiln its training artifact (kilnc with its default AdamW: betas 0.9,
0.999, eps 1e-8, weight decay 0.01, no clipping).

1. kiln: kiln-run writes the parameters it starts from (a run of 0 steps),
   trains the artifact for --steps steps on TRAIN.kilndata in file order
   (--no-shuffle) with --warmup steps of warm-up and a cosine decay to 0 at
   --steps, logging every step's loss, and evaluates the checkpoint on
   HELDOUT.kilndata (the mean loss over its whole batches, in file order).
2. With --params (kiln-ref --init-params under the same seed), kiln-run's
   initial parameters must match them; with --expected (kiln-ref's f64 loss
   at PARAMS and the random tokens PARAMS also holds), the PyTorch model's
   loss there must match it (relative 1e-5 in f32, 1e-6 in f64).
3. PyTorch: the same model, its recurrence kiln_rnn.rnn_forward (kiln.rnn's
   equations and layouts), starts from kiln-run's initial parameters and
   trains on the same batches in the same order with torch.optim.AdamW under
   the same hyper-parameters and learning rates (rounded to f32 as kiln-run
   passes them), in f32 without TF32, then evaluates on the same batches.
4. The held-out bits per byte (loss in nats / ln 2) of the two must agree
   within --tolerance (relative), else the exit status is 1. The per-step
   training losses are tabulated (losses.md) with their largest relative
   difference, without a bound. With --reference-log (train_reference's
   first steps on the CPU reference from the same start), kiln-run's losses
   of those steps must agree with it within 1e-3. With --bf16-artifact,
   kiln's bf16 run is trained and evaluated beside it, without a bound.

--torch-only trains and evaluates only the PyTorch side (from --params, or
from kiln-run's initial parameters in DIR/kiln_init.safetensors), e.g. on a
machine without a GPU with --device cpu.

    python3 compare_rnn_lm.py --self-test

checks the model parser and, where PyTorch is installed, the PyTorch model's
shapes on a tiny batch.
"""

import argparse
import math
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_losses import (KilnData, add_training_arguments, compare_initial,  # noqa: E402
                            parse_kiln_run_losses, read_safetensors, relative,
                            run, scheduled_lr)

EVAL_LINE = re.compile(r"^evaluated .*?:(.*)$", re.M)
FIELDS = ("tokens", "targets")


def parse_model(text):
    """The recurrent LM's sizes and cell function, read from its .mlir."""
    cfg = {}
    params = re.findall(r'%(\w+): tensor<([0-9x]+)xf32> \{kiln.param', text)
    cfg["params"] = {name: [int(d) for d in shape.split("x")] for name, shape in params}
    want = {"tok_emb", "w_x", "r", "b", "w_head", "b_head"}
    if set(cfg["params"]) != want:
        raise ValueError(f"expected the parameters {sorted(want)}, got {sorted(cfg['params'])}")
    rnn = re.findall(r"kiln\.rnn %\w+, %r, %b, %\w+ function = (\w+)", text)
    if len(rnn) != 1:
        raise ValueError("expected one kiln.rnn over %r and %b")
    cfg["function"] = rnn[0]
    if not re.search(r"kiln\.constant dense<0\.0> : tensor<[0-9x]+xf32>", text):
        raise ValueError("expected zero initial states (kiln.constant dense<0.0>)")
    if re.search(r"kiln\.(dropout|layer_norm|rms_norm)", text):
        raise ValueError("the PyTorch model has no dropout or norms")
    gates, cfg["heads"], cfg["head_size"], _ = cfg["params"]["r"]
    cfg["gates"] = gates
    tokens = re.search(r"%tokens: tensor<(\d+)x(\d+)xi32>", text)
    cfg["batch"], cfg["length"] = int(tokens.group(1)), int(tokens.group(2))
    if cfg["params"]["w_x"][1] != gates * cfg["heads"] * cfg["head_size"]:
        raise ValueError("w_x must project to [Gw, NH, D]")
    return cfg


def parse_evaluation(text):
    """{output: mean} from kiln-run's evaluation line."""
    m = EVAL_LINE.findall(text)
    if not m:
        return {}
    words = m[-1].split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)}


# ---------------------------------------------------------------------------
# PyTorch.

def torch_loss(P, tokens, targets, cfg):
    import torch
    import torch.nn.functional as F
    from kiln_rnn import SIZES, rnn_forward
    B, T = tokens.shape
    G, NH, D = cfg["gates"], cfg["heads"], cfg["head_size"]
    S = SIZES[cfg["function"]][3]
    emb = F.embedding(tokens.long(), P["tok_emb"])
    wx = (emb @ P["w_x"]).reshape(B, T, G, NH, D)
    s0 = torch.zeros(S, B, NH, D, dtype=wx.dtype, device=wx.device)
    states, _ = rnn_forward(cfg["function"], wx, P["r"], P["b"], s0)
    h = states[0].reshape(B, T, NH * D)
    logits = (h @ P["w_head"] + P["b_head"]).reshape(B * T, -1)
    return F.cross_entropy(logits, targets.long().reshape(B * T))


def batch_tensors(data, first, count, device):
    import torch
    raw = bytearray(data.records(first, count))
    words = torch.frombuffer(raw, dtype=torch.int32).reshape(count, data.record_bytes // 4)
    out = {}
    for name, dtype, shape, offset, nbytes in data.fields:
        if name in FIELDS:
            out[name] = words[:, offset // 4:(offset + nbytes) // 4].reshape(
                [count] + shape).to(device)
    return out["tokens"], out["targets"]


def load_params(params, cfg, device, dtype=None):
    import torch
    P = {}
    for name in cfg["params"]:
        st_dtype, shape, raw = params[name]
        if st_dtype != "F32":
            raise ValueError(f"{name}: {st_dtype}, the comparison runs in f32")
        t = torch.frombuffer(bytearray(raw), dtype=torch.float32).reshape(shape).to(device)
        P[name] = t.to(dtype) if dtype is not None else t
    return P


def train_torch(cfg, params, train, args):
    import torch
    P = {n: t.requires_grad_(True) for n, t in load_params(params, cfg, args.device).items()}
    opt = torch.optim.AdamW(list(P.values()), lr=0.0, betas=(args.beta1, args.beta2),
                            eps=args.epsilon, weight_decay=args.weight_decay)
    B = cfg["batch"]
    usable = train.record_count // B * B
    losses = {}
    start = time.time()
    for step in range(args.steps):
        tokens, targets = batch_tensors(train, (step * B) % usable, B, args.device)
        for group in opt.param_groups:
            group["lr"] = scheduled_lr(args.lr, step, args.warmup, args.steps)
        opt.zero_grad(set_to_none=True)
        loss = torch_loss(P, tokens, targets, cfg)
        loss.backward()
        opt.step()
        losses[step + 1] = float(loss.item())
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            print(f"torch step {step + 1}/{args.steps}  loss {losses[step + 1]:.6g}  "
                  f"{(step + 1) / (time.time() - start):.1f} steps/s", flush=True)
    return losses, {n: p.detach() for n, p in P.items()}


def evaluate_torch(cfg, P, heldout, device):
    """The mean loss over the whole batches of `heldout` in file order (kiln-run's)."""
    import torch
    B = cfg["batch"]
    batches = heldout.record_count // B
    total = 0.0
    with torch.no_grad():
        for i in range(batches):
            tokens, targets = batch_tensors(heldout, i * B, B, device)
            total += float(torch_loss(P, tokens, targets, cfg).item())
    return total / batches, batches


def check_forward(cfg, drawn, expected_path, device):
    import torch
    ref = struct_f32(read_safetensors(expected_path)["loss"][2])
    tokens, targets = (torch.frombuffer(bytearray(drawn[n][2]), dtype=torch.int32)
                       .reshape(drawn[n][1]).to(device) for n in FIELDS)
    failures = []
    for dtype, bound in ((torch.float32, 1e-5), (torch.float64, 1e-6)):
        P = load_params(drawn, cfg, device, dtype)
        with torch.no_grad():
            value = float(torch_loss(P, tokens, targets, cfg).item())
        err = relative(value, ref)
        ok = err <= bound
        name = str(dtype).split(".")[-1]
        print(f"forward check ({name}): torch loss {value:.9g}, kiln-ref f64 {ref:.9g}, "
              f"rel err {err:.2e} (bound {bound:g}): {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"forward check in {name}")
    return failures


def struct_f32(raw):
    import struct
    return struct.unpack("<f", raw)[0]


# ---------------------------------------------------------------------------
# kiln.

def train_kiln(args, artifact, steps, name):
    """kiln-run's per-step losses and held-out mean loss (None for 0 steps)."""
    log = os.path.join(args.workdir, f"{name}.log")
    if os.path.exists(log):
        os.remove(log)
    checkpoint = os.path.join(args.workdir, f"{name}.safetensors")
    text = run([args.kiln_run, artifact, "--steps", str(steps), "--dataset", args.train,
                "--batch-fields", ",".join(FIELDS), "--no-shuffle", "--lr", str(args.lr),
                "--schedule", "cosine", "--warmup", str(args.warmup),
                "--schedule-steps", str(args.steps), "--seed", str(args.seed),
                "--log-every", "1", "--checkpoint", checkpoint], log)
    if steps == 0:
        return {}, None, checkpoint
    text = run([args.kiln_run, artifact, "--params", checkpoint, "--dataset", args.heldout,
                "--batch-fields", ",".join(FIELDS)], log)
    evaluated = parse_evaluation(text)
    if "loss" not in evaluated:
        sys.exit(f"no evaluation line in {log}")
    return parse_kiln_run_losses(open(log).read()), evaluated["loss"], checkpoint


def bits(nats):
    return nats / math.log(2)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_training_arguments(p, steps=600, lr=2e-3, warmup=50, tolerance=0.02)
    p.add_argument("--train")
    p.add_argument("--heldout")
    p.add_argument("--table-steps", type=int, default=50,
                   help="steps shown in the loss table (all are in losses.md)")
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--device", default="cuda")
    p.add_argument("--torch-only", action="store_true")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args(argv)
    if args.self_test:
        return self_test()
    required = ["model", "train", "heldout", "workdir"] + ([] if args.torch_only else ["artifact"])
    for name in required:
        if getattr(args, name) is None:
            p.error(f"--{name} is required")
    os.makedirs(args.workdir, exist_ok=True)
    with open(args.model) as f:
        cfg = parse_model(f.read())
    train, heldout = KilnData(args.train), KilnData(args.heldout)
    print(f"{args.model}: kiln.rnn {cfg['function']}, {cfg['heads']} heads of "
          f"{cfg['head_size']}, batch {cfg['batch']}, length {cfg['length']}, "
          f"{sum(math.prod(s) for s in cfg['params'].values())} parameters; "
          f"{args.steps} steps, peak lr {args.lr:g}, warm-up {args.warmup}, cosine to 0")

    failures = []
    init = os.path.join(args.workdir, "kiln_init.safetensors")
    kiln = bf16 = {}
    kiln_loss = bf16_loss = None
    if not args.torch_only:
        _, _, init = train_kiln(args, args.artifact, 0, "kiln_init")
        if args.params:
            worst, name = compare_initial(read_safetensors(args.params), read_safetensors(init),
                                          cfg["params"], args.params)
            if not worst <= 1e-5:
                failures.append(f"kiln-run's initial parameters differ from {args.params} "
                                f"by up to {worst:.2e} ({name})")
        kiln, kiln_loss, _ = train_kiln(args, args.artifact, args.steps, "kiln_f32")
        if args.bf16_artifact:
            bf16, bf16_loss, _ = train_kiln(args, args.bf16_artifact, args.steps, "kiln_bf16")
    elif not os.path.exists(init):
        if not args.params:
            sys.exit("--torch-only needs --params or DIR/kiln_init.safetensors")
        init = args.params

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("compare_rnn_lm.py: no CUDA device (--device cpu runs on the CPU)")
    if args.expected and args.params:
        failures += check_forward(cfg, read_safetensors(args.params), args.expected, args.device)
    start = time.time()
    torch_losses, P = train_torch(cfg, read_safetensors(init), train, args)
    torch_seconds = time.time() - start
    torch_loss_heldout, batches = evaluate_torch(cfg, P, heldout, args.device)

    if args.reference_log:
        with open(args.reference_log) as f:
            reference = parse_kiln_run_losses(f.read())
        if not reference:
            failures.append(f"no losses in {args.reference_log}")
        for step, value in sorted(reference.items()):
            k = kiln.get(step, torch_losses.get(step) if args.torch_only else None)
            err = relative(k, value) if k is not None else float("inf")
            ok = err <= 1e-3
            print(f"step {step}: {'torch' if args.torch_only else 'kiln-run'} {k}, CPU "
                  f"reference {value}: rel err {err:.2e} {'ok' if ok else 'FAIL'}")
            if not ok:
                failures.append(f"step {step} against the CPU reference")

    header = "| step | lr | torch f32 |" + (" kiln f32 | rel err |" if kiln else "") + \
        (" kiln bf16 | rel err |" if bf16 else "")
    lines = [header, "|---:|---:|---:|" + ("---:|---:|" if kiln else "") + ("---:|---:|" if bf16 else "")]
    worst_step = 0.0
    for step in range(1, args.steps + 1):
        t = torch_losses[step]
        row = f"| {step} | {scheduled_lr(args.lr, step - 1, args.warmup, args.steps):.3e} | {t:.6g} |"
        for losses, is_f32 in ((kiln, True), (bf16, False)):
            if losses:
                k = losses.get(step)
                err = relative(k, t) if k is not None else float("inf")
                if is_f32:
                    worst_step = max(worst_step, err)
                row += f" {k if k is not None else 'missing'} | {err:.2e} |"
        lines.append(row)
    with open(os.path.join(args.workdir, "losses.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    shown = lines[:2 + args.table_steps]
    if args.steps > args.table_steps:
        shown += lines[-1:]
    print("\n".join(shown))
    print(f"torch trained {args.steps} steps in {torch_seconds:.1f} s")

    print(f"held-out over {batches} batches of {cfg['batch']} records of {args.heldout}:")
    tb = bits(torch_loss_heldout)
    print(f"  torch f32  {tb:.4f} bits per byte (loss {torch_loss_heldout:.6g} nats)")
    ok = True
    if kiln_loss is not None:
        kb = bits(kiln_loss)
        err = relative(kb, tb)
        ok = err <= args.tolerance
        print(f"  kiln f32   {kb:.4f} bits per byte (loss {kiln_loss:.6g} nats), "
              f"rel diff {err:.2e} (bound {args.tolerance:g})")
        print(f"  largest relative difference of the per-step training losses (f32): "
              f"{worst_step:.2e}")
    if bf16_loss is not None:
        print(f"  kiln bf16  {bits(bf16_loss):.4f} bits per byte (loss {bf16_loss:.6g} nats), "
              f"rel diff {relative(bits(bf16_loss), tb):.2e} (no bound)")
    for failure in failures:
        print(f"FAIL: {failure}")
    if kiln_loss is not None:
        print(f"{'PASS' if ok else 'FAIL'}: held-out bits per byte of kiln {bits(kiln_loss):.4f} "
              f"and torch {tb:.4f} differ by {relative(bits(kiln_loss), tb):.2e} "
              f"(bound {args.tolerance:g})")
    return 0 if ok and not failures else 1


def self_test():
    here = os.path.dirname(os.path.abspath(__file__))
    found = 0
    for function in ("lstm", "slstm"):
        for path in (os.path.join(here, "..", f"byte_lm_{function}.mlir"),
                     os.path.join(here, f"byte_lm_{function}.mlir")):
            if not os.path.exists(path):
                continue
            with open(path) as f:
                cfg = parse_model(f.read())
            assert cfg["function"] == function, cfg
            assert cfg["gates"] == 4, cfg
            found += 1
            print(f"{path}: kiln.rnn {cfg['function']}, {cfg['heads']} heads of "
                  f"{cfg['head_size']}, batch {cfg['batch']}, length {cfg['length']}")
            try:
                import torch
            except ImportError:
                continue
            small = dict(cfg, heads=2, head_size=3)
            gen = torch.Generator().manual_seed(0)
            shapes = {"tok_emb": [256, 5], "w_x": [5, 24], "r": [4, 2, 3, 3], "b": [4, 2, 3],
                      "w_head": [6, 256], "b_head": [256]}
            P = {n: torch.randn(s, generator=gen) * 0.3 for n, s in shapes.items()}
            tokens = torch.randint(0, 256, (2, 7), generator=gen, dtype=torch.int32)
            loss = torch_loss(P, tokens, tokens, small)
            assert loss.shape == () and math.isfinite(float(loss)), loss
    assert found, "no byte_lm_{lstm,slstm}.mlir found"
    text = ("evaluated forward on 7 batches of 32 records of lm_heldout.kilndata: "
            "loss 1.62354\n")
    assert parse_evaluation(text) == {"loss": 1.62354}
    print("self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
