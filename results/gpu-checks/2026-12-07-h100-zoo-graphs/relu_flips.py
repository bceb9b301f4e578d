#!/usr/bin/env python3
"""What one ReLU input on the other side of zero does to a zoo model's f64
gradients: for each ReLU input within MARGIN of zero (relative to its
tensor's RMS, at the bundle's weights and batch), the f64 gradients with
that one element's side flipped, against the unflipped ones. An f32
computation (PyTorch's or kiln's) that rounds such an element across zero
computes the flipped function exactly; its gradients then sit at the listed
distance from f64 without any error of its own.

    relu_flips.py BUNDLE MODEL [MARGIN] [TENSOR...]
    relu_flips.py BUNDLE MODEL MARGIN --explain GRADIENTS.safetensors

Prints, per flipped element, the tensors (default: the 5 that move most)
and their distance from the unflipped f64 gradient / largest |f64|.
With --explain (kiln-run --output's gradients), it looks greedily for the
set of flips whose f64 gradients come nearest to the given ones and prints
each tensor's distance before and after: a computation that is right up to
which side of zero a few elements rounded to lands near f64 with those
flips.
"""
import copy
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tests/zoo"))
import models  # noqa: E402
import zoo  # noqa: E402


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def load(bundle, name):
    """The model with its loss at the bundle's weights, and the batch."""
    path = os.path.join(bundle, name)
    info = json.load(open(path + ".json"))
    torch.manual_seed(0)
    case = models.ZOO[name](info["size"])
    train = models.WithLoss(case.model, case.loss).train()
    buffers = zoo.load_safetensors(path + ".buffers.safetensors")
    train.load_state_dict({n: torch.from_numpy(a.copy()) for n, a in buffers.items()},
                          strict=False)
    batch = zoo.load_safetensors(path + ".batch.safetensors")
    args = [torch.from_numpy(batch[n].copy()) for n in info["inputs"]]
    return zoo.as_exported(train), args


def run(train, args, flip=(), record=None):
    """f64 gradients; FLIP: (ReLU call number, flat index) pairs to flip;
    RECORD: a list that receives each ReLU call's (label, input)."""
    model = copy.deepcopy(train).double().to(DEVICE)
    calls = [0]
    flips = {}
    for call, index in flip:
        flips.setdefault(call, []).append(index)

    def hook(module, inputs, out, label):
        x = inputs[0]
        call = calls[0]
        calls[0] += 1
        if record is not None:
            record.append((label, x.detach()))
        if call not in flips:
            return out
        mask = torch.zeros(x.numel(), dtype=torch.bool, device=x.device)
        mask[flips[call]] = True
        mask = mask.view_as(x)
        return torch.where(mask, torch.where(x < 0, x, 0 * x), torch.relu(x))

    for label, module in model.named_modules():
        if isinstance(module, torch.nn.ReLU):
            module.inplace = False
            module.register_forward_hook(lambda m, i, o, label=label: hook(m, i, o, label))
    loss = model(*((a.double() if a.is_floating_point() else a).to(DEVICE) for a in args))
    loss.backward()
    return {"grad." + n: p.grad.detach().clone() for n, p in model.named_parameters()}


def distances(grads, target, reference):
    """{tensor: max |grads - target| / max |reference|}."""
    return {n: ((grads[n] - target[n]).abs().max() / reference[n].abs().max()).item()
            for n in target}


MAX_FLIPS = 6  # the greedy search's rounds
MIN_GAIN = 0.01  # a flip must lower the cost by this fraction to be taken


def explain(train, args, clean, candidates, path):
    """Greedy: add the flip that brings the f64 gradients nearest (sum of
    squared per-tensor distances) to the gradients at PATH, while one lowers
    that by MIN_GAIN, up to MAX_FLIPS flips."""
    target = {n: torch.from_numpy(a.copy()).double().to(DEVICE)
              for n, a in zoo.load_safetensors(path).items() if n in clean}
    cost = lambda grads: sum(d * d for d in distances(grads, target, clean).values())
    chosen, best = [], cost(clean)
    before = distances(clean, target, clean)
    useful = [c for c in candidates if max(distances(run(train, args, [c[:2]]), clean,
                                                     clean).values()) > 1e-6]
    print(f"{len(useful)} flip(s) that move any gradient; greedy search")
    while len(chosen) < MAX_FLIPS:
        trials = [(cost(run(train, args, chosen + [c[:2]])), c) for c in useful
                  if c[:2] not in chosen]
        if not trials or min(trials)[0] >= best * (1 - MIN_GAIN):
            break
        best, c = min(trials)
        chosen.append(c[:2])
        print(f"  flip {c[2]} (call {c[0]}) element {c[1]}, x = {c[3]:+.2e} of the RMS: "
              f"cost {best:.3e}")
    after = distances(run(train, args, chosen), target, clean)
    print("tensor  distance of the given gradients from f64, and from f64 with the flips")
    for n in sorted(before, key=before.get, reverse=True)[:12]:
        print(f"{n} {before[n]:.3e} {after[n]:.3e}")


def main():
    bundle, name = sys.argv[1:3]
    margin = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    wanted = sys.argv[4:]
    train, args = load(bundle, name)
    record = []
    clean = run(train, args, record=record)
    record = [(label, x.cpu()) for label, x in record]
    candidates = []
    for call, (label, x) in enumerate(record):
        rms = x.pow(2).mean().sqrt()
        for i in torch.nonzero((x.abs() < margin * rms).flatten()).flatten().tolist():
            candidates.append((call, i, label, (x.flatten()[i] / rms).item()))
    print(f"{name}: {len(candidates)} ReLU input(s) within {margin:g} of zero (of the RMS)")
    if wanted[:1] == ["--explain"]:
        return explain(train, args, clean, candidates, wanted[1])
    for call, i, label, value in candidates:
        flipped = run(train, args, flip=[(call, i)])
        moved = sorted((((flipped[n] - g).abs().max() / g.abs().max()).item(), n)
                       for n, g in clean.items() if not wanted or n in wanted)[::-1]
        print(f"{label} (call {call}) element {i}, x = {value:+.2e} of the RMS: " +
              ", ".join(f"{n} {d:.3e}" for d, n in moved[:len(wanted) or 5]))


if __name__ == "__main__":
    main()
