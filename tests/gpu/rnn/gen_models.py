#!/usr/bin/env python3
"""Writes the recurrent-kernel check models into a folder.

Each model is a loss over one kiln.rnn whose operands are all parameters
(so that d(Wx), dR, db and d(initial states) are all checked), over the
head sizes, step counts and batch sizes the kernels are planned for:
one block per head, clusters and grid groups; batches that are not a
multiple of 8; sLSTM with nonzero initial c, n and m (n = exp(p) > 0);
zero initial states as a constant; a loss on the last states only (the
backward pass without per-step gradients). Parameters take their own
initialisers (`gpu-init-params`: R ~ N(0, 0.25 / D), a recurrence whose
gradients neither explode nor vanish over 1024 steps) and the loss sums, so
that gradients are of order one. f32 runs on tensor cores as tf32 in three
products and is held to 2e-3 relative, 1e-4 absolute against f64; bf16 to
5e-2 relative plus 1.5e-2 of each output's largest magnitude.
    gen_models.py OUT_DIR
"""
import os
import sys

GATES = {"lstm": (4, 4, 4, 2), "slstm": (4, 4, 4, 4), "gru": (3, 3, 4, 1),
         "elman": (1, 1, 1, 1)}

# name, function, B, T, NH, D, initial states (param|exp|zero), loss (all|last)
CASES = [
    ("lstm_d16", "lstm", 3, 64, 2, 16, "param", "all"),
    ("lstm_d64_t1024", "lstm", 3, 1024, 1, 64, "zero", "last"),
    ("lstm_d64_last", "lstm", 5, 100, 2, 64, "param", "last"),
    ("lstm_d128", "lstm", 3, 64, 1, 128, "param", "all"),
    ("lstm_d256", "lstm", 3, 32, 1, 256, "param", "all"),
    ("lstm_d768", "lstm", 3, 16, 1, 768, "zero", "all"),
    ("lstm_b20_d48", "lstm", 20, 32, 2, 48, "param", "all"),
    ("gru_d64", "gru", 3, 128, 2, 64, "param", "all"),
    ("gru_d128", "gru", 3, 64, 1, 128, "param", "all"),
    ("gru_d768", "gru", 3, 16, 1, 768, "zero", "last"),
    ("elman_d64", "elman", 3, 512, 1, 64, "param", "all"),
    ("elman_d16", "elman", 7, 100, 4, 16, "zero", "last"),
    ("slstm_d64", "slstm", 3, 128, 2, 64, "exp", "last"),
    ("slstm_d16_zero", "slstm", 3, 64, 2, 16, "zero", "all"),
    ("slstm_d128", "slstm", 3, 64, 1, 128, "exp", "last"),
]


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def model(function, b, t, nh, d, init, loss):
    gw, gr, gb, s = GATES[function]
    wx, r, bias = tensor([b, t, gw, nh, d]), tensor([gr, nh, d, d]), tensor([gb, nh, d])
    st, all_, last = tensor([s, b, nh, d]), tensor([s, b, t, nh, d]), tensor([s, b, nh, d])
    std = round(0.5 / d ** 0.5, 6)
    args = [f'%wx: {wx} {{kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "wx"}}',
            f'%r: {r} {{kiln.param = #kiln.init<normal, std = {std}>, kiln.name = "r"}}',
            f'%b: {bias} {{kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "b"}}']
    body = []
    if init == "zero":
        body.append(f"%s0 = kiln.constant dense<0.0> : {st}")
    elif init == "exp":
        args.append(f'%p0: {st} {{kiln.param = #kiln.init<normal, std = 0.3>, kiln.name = "p0"}}')
        body.append(f"%s0 = kiln.exp %p0 : {st}")
    else:
        args.append(f'%s0: {st} {{kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "s0"}}')
    target = all_ if loss == "all" else last
    args.append(f'%y: {target} {{kiln.name = "y"}}')
    body.append(f"%all, %last = kiln.rnn %wx, %r, %b, %s0 function = {function} "
                f": {wx}, {r}, {bias}, {st}")
    body.append(f"%loss = kiln.mse_loss %{loss}, %y reduction = sum : {target}")
    lines = [f"// kiln.rnn {function}: B={b} T={t} NH={nh} D={d}, initial states {init}, "
             f"loss on {loss} states.",
             "// gpu-tolerance: 2e-3 1e-4",
             "// gpu-bf16-tolerance: 5e-2 1.5e-2",
             "// gpu-init-params"]
    lines.append("func.func @loss(")
    lines.append(",\n".join("    " + a for a in args) + ") -> tensor<f32> {")
    lines += ["  " + x for x in body]
    lines += ["  return %loss : tensor<f32>", "}", ""]
    return "\n".join(lines)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, function, b, t, nh, d, init, loss in CASES:
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(model(function, b, t, nh, d, init, loss))


if __name__ == "__main__":
    main()
