#!/usr/bin/env python3
"""kiln.rnn in PyTorch: the op's equations and layouts, differentiable by autograd.

    from kiln_rnn import rnn_forward
    states, last = rnn_forward("lstm", wx, r, b, s0)

Shapes (the dialect's, FlashRNN's conventions; dialects/kiln/IR/KilnNNOps.td):

    wx  [B, T, Gw, NH, D]   the input projection, per step, gate and head
    r   [Gr, NH, D, D]      per gate a block-diagonal recurrent matrix of NH
                            heads: (R_g h)[n, d] = sum_p r[g, n, d, p] h[n, p]
                            (dim 2 the gate output d, dim 3 the previous state p)
    b   [Gb, NH, D]
    s0  [S, B, NH, D]       the initial states
    ->  states [S, B, T, NH, D] (every state after every step),
        last   [S, B, NH, D]

    function | Gw Gr Gb S | states
    lstm     |  4  4  4 2 | h, c
    slstm    |  4  4  4 4 | h, c, n, m
    gru      |  3  3  4 1 | h
    elman    |  1  1  1 1 | h

Gate pre-activations g = R_g h_prev + Wx_t + b per gate, sigma the logistic
sigmoid:

    lstm (i f z o):  c' = sigma(f) c + sigma(i) tanh(z);  h' = sigma(o) tanh(c')
    slstm (i~ f~ z o): m' = max(i~, log sigma(f~) + m);  i = exp(i~ - m');
                     f = exp(log sigma(f~) + m - m');  c' = f c + i tanh(z);
                     n' = f n + i;  h' = sigma(o) c' / n'
    gru:             g0 = R0 h + b0;  r = sigma(Wx0 + R1 h + b1);
                     z = sigma(Wx1 + R2 h + b2);  n = Wx2 + b3;
                     h' = z h + (1 - z) tanh(n + r g0)
    elman:           h' = tanh(g)

The computation runs in float32 whatever the inputs' type (bf16 and f16 inputs
are widened first, so every product and sum accumulates in f32) and the results
are cast back to the inputs' type; float64 inputs are computed in float64 (the
oracle mode). Autograd differentiates it: the backward pass is PyTorch's. In
slstm the maximum passes its gradient to i~ when i~ >= log sigma(f~) + m and to
the other side otherwise, as the CPU reference's rnn_backward does.

    python3 kiln_rnn.py --self-test [--kiln-ref PATH] [--kiln-opt PATH]

checks the module against a scalar loop written from the formulas in float64
(forward; also on the GPU where there is one), against finite differences
(autograd's gradcheck, float64), the bf16 contract (f32 computation, one
rounding at the end) and, where kiln-ref
(and kiln-opt, for the gradients) are found (the flags, $KILN_REF / $KILN_OPT,
the repository's bazel-bin, or PATH), against the CPU reference's f64 forward
and kiln.rnn_backward on the same random inputs.
"""

import argparse
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F

# (Gw, Gr, Gb, S) of each cell function.
SIZES = {
    "lstm": (4, 4, 4, 2),
    "slstm": (4, 4, 4, 4),
    "gru": (3, 3, 4, 1),
    "elman": (1, 1, 1, 1),
}
STATE_NAMES = {"lstm": ("h", "c"), "slstm": ("h", "c", "n", "m"), "gru": ("h",),
               "elman": ("h",)}


def _lstm(x, rh, b, prev):
    g = x + rh + b
    i, f, z, o = g.unbind(1)
    _, c = prev
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(z)
    return [torch.sigmoid(o) * torch.tanh(c), c]


def _slstm(x, rh, b, prev):
    g = x + rh + b
    i_tilde, f_tilde, z, o = g.unbind(1)
    _, c, n, m = prev
    log_f = F.logsigmoid(f_tilde)
    m_new = torch.where(i_tilde >= log_f + m, i_tilde, log_f + m)
    i = torch.exp(i_tilde - m_new)
    f = torch.exp(log_f + m - m_new)
    c = f * c + i * torch.tanh(z)
    n = f * n + i
    return [torch.sigmoid(o) * c / n, c, n, m_new]


def _gru(x, rh, b, prev):
    (h,) = prev
    g0 = rh[:, 0] + b[0]
    r = torch.sigmoid(x[:, 0] + rh[:, 1] + b[1])
    z = torch.sigmoid(x[:, 1] + rh[:, 2] + b[2])
    n = x[:, 2] + b[3]
    return [z * h + (1 - z) * torch.tanh(n + r * g0)]


def _elman(x, rh, b, prev):
    return [torch.tanh(x[:, 0] + rh[:, 0] + b[0])]


CELLS = {"lstm": _lstm, "slstm": _slstm, "gru": _gru, "elman": _elman}


def check_shapes(function, wx, r, b, s0):
    """Raises ValueError unless the operands have kiln.rnn's shapes for `function`."""
    if function not in SIZES:
        raise ValueError(f"unknown function {function!r}; one of {sorted(SIZES)}")
    gw, gr, gb, s = SIZES[function]
    if wx.dim() != 5:
        raise ValueError(f"wx must be [B, T, Gw, NH, D], got {list(wx.shape)}")
    bsz, _, _, nh, d = wx.shape
    want = {"wx": [bsz, wx.shape[1], gw, nh, d], "r": [gr, nh, d, d], "b": [gb, nh, d],
            "s0": [s, bsz, nh, d]}
    for name, t in (("wx", wx), ("r", r), ("b", b), ("s0", s0)):
        if list(t.shape) != want[name]:
            raise ValueError(f"{function}: {name} must be {want[name]}, got {list(t.shape)}")
    dtypes = {t.dtype for t in (wx, r, b, s0)}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise ValueError(f"the operands must share one floating-point type, got {dtypes}")


def rnn_forward(function, wx, r, b, s0):
    """kiln.rnn: (states [S, B, T, NH, D], last_states [S, B, NH, D]).

    `function` is "lstm", "slstm", "gru" or "elman"; wx [B, T, Gw, NH, D],
    r [Gr, NH, D, D], b [Gb, NH, D], s0 [S, B, NH, D], all of one floating
    type. Computes in float32 (float64 for float64 inputs) and returns the
    inputs' type.
    """
    check_shapes(function, wx, r, b, s0)
    dtype = wx.dtype
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    wx, r, b, s0 = (t.to(compute) for t in (wx, r, b, s0))
    cell = CELLS[function]
    prev = list(s0.unbind(0))
    steps = []
    for t in range(wx.shape[1]):
        # rh[b, g, n, d] = sum_p r[g, n, d, p] * h[b, n, p]
        rh = torch.einsum("gndp,bnp->bgnd", r, prev[0])
        prev = cell(wx[:, t], rh, b, prev)
        steps.append(torch.stack(prev, 0))
    if steps:
        states = torch.stack(steps, 2)
        last = steps[-1]
    else:
        states = s0.new_zeros((s0.shape[0], s0.shape[1], 0) + tuple(s0.shape[2:]))
        last = s0
    return states.to(dtype), last.to(dtype)


# ---------------------------------------------------------------------------
# Self-test.

def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x):
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def loop_reference(function, wx, r, b, s0):
    """The op, element by element in Python floats (float64), from the formulas."""
    wx, r, b, s0 = (t.detach().double().tolist() for t in (wx, r, b, s0))
    gw, gr, gb, ns = SIZES[function]
    bsz, steps, nh, d = len(wx), len(wx[0]), len(wx[0][0][0]), len(wx[0][0][0][0])
    states = [[[[[0.0] * d for _ in range(nh)] for _ in range(steps)] for _ in range(bsz)]
              for _ in range(ns)]
    last = [[[[0.0] * d for _ in range(nh)] for _ in range(bsz)] for _ in range(ns)]
    for row in range(bsz):
        prev = [[list(s0[s][row][n]) for n in range(nh)] for s in range(ns)]
        for t in range(steps):
            nxt = [[[0.0] * d for _ in range(nh)] for _ in range(ns)]
            for n in range(nh):
                for e in range(d):
                    rh = [sum(r[g][n][e][p] * prev[0][n][p] for p in range(d))
                          for g in range(gr)]
                    x = [wx[row][t][g][n][e] for g in range(gw)]
                    bias = [b[g][n][e] for g in range(gb)]
                    pv = [prev[s][n][e] for s in range(ns)]
                    if function == "lstm":
                        a = [x[g] + rh[g] + bias[g] for g in range(4)]
                        c = _sigmoid(a[1]) * pv[1] + _sigmoid(a[0]) * math.tanh(a[2])
                        out = [_sigmoid(a[3]) * math.tanh(c), c]
                    elif function == "slstm":
                        a = [x[g] + rh[g] + bias[g] for g in range(4)]
                        log_f = _log_sigmoid(a[1])
                        m = max(a[0], log_f + pv[3])
                        gi, gf = math.exp(a[0] - m), math.exp(log_f + pv[3] - m)
                        c = gf * pv[1] + gi * math.tanh(a[2])
                        nn = gf * pv[2] + gi
                        out = [_sigmoid(a[3]) * c / nn, c, nn, m]
                    elif function == "gru":
                        g0 = rh[0] + bias[0]
                        rr = _sigmoid(x[0] + rh[1] + bias[1])
                        z = _sigmoid(x[1] + rh[2] + bias[2])
                        out = [z * pv[0] + (1 - z) * math.tanh(x[2] + bias[3] + rr * g0)]
                    else:
                        out = [math.tanh(x[0] + rh[0] + bias[0])]
                    for s in range(ns):
                        nxt[s][n][e] = out[s]
            prev = nxt
            for s in range(ns):
                states[s][row][t] = [list(v) for v in nxt[s]]
        for s in range(ns):
            last[s][row] = [list(v) for v in prev[s]]
    return (torch.tensor(states, dtype=torch.float64),
            torch.tensor(last, dtype=torch.float64))


def random_operands(function, bsz, steps, nh, d, gen, dtype=torch.float64, scale=1.0):
    gw, gr, gb, ns = SIZES[function]
    rnd = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)
    wx = rnd(bsz, steps, gw, nh, d) * scale
    r = rnd(gr, nh, d, d) * (scale / math.sqrt(d))
    b = rnd(gb, nh, d) * 0.5 * scale
    s0 = rnd(ns, bsz, nh, d) * 0.5
    if function == "slstm":
        s0[2] = s0[2].abs() + 0.5  # n > 0, as the recurrence keeps it
    return [t.to(dtype) for t in (wx, r, b, s0)]


def max_rel(a, b):
    """max |a - b| over max |b| (the scale of the tensor)."""
    a, b = a.double(), b.double()
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


# safetensors with the standard library (torch tensors in, out).
_ST_DTYPES = {"F32": (torch.float32, 4, "f"), "F64": (torch.float64, 8, "d")}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        values = t.detach().to(torch.float32).contiguous().flatten().tolist()
        blob = struct.pack(f"<{len(values)}f", *values)
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode())
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, size, code = _ST_DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        values = struct.unpack(f"<{(end - begin) // size}{code}", blob[8 + n + begin:8 + n + end])
        out[name] = torch.tensor(values, dtype=dtype).reshape(info["shape"])
    return out


def find_tool(flag, env, name):
    if flag:
        return flag
    if os.environ.get(env):
        return os.environ[env]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    built = os.path.join(root, "bazel-bin", "tools", name, name)
    if os.path.exists(built):
        return built
    return shutil.which(name)


def _ty(shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def kiln_models(function, shapes):
    """(forward model, loss model) of kiln.rnn at these operand shapes: the
    forward returns states and last; the loss is <states, ws> + <last, wl>
    with the four operands as parameters, for kiln-opt --kiln-autodiff."""
    wx, r, b, s0 = shapes
    bsz, steps, _, nh, d = wx
    ns = s0[0]
    st, la = [ns, bsz, steps, nh, d], [ns, bsz, nh, d]
    operands = ", ".join(_ty(s) for s in shapes)
    rnn = f"%all, %last = kiln.rnn %wx, %r, %b, %s0 function = {function} : {operands}"
    names = ("wx", "r", "b", "s0")

    def args(param):
        attr = "kiln.param = #kiln.init<zeros>, " if param else ""
        return ", ".join(f'%{n}: {_ty(s)} {{{attr}kiln.name = "{n}"}}' for n, s in zip(names, shapes))

    forward = (f"func.func @f({args(False)})\n"
               f'    -> ({_ty(st)} {{kiln.name = "states"}}, {_ty(la)} {{kiln.name = "last"}}) {{\n'
               f"  {rnn}\n  return %all, %last : {_ty(st)}, {_ty(la)}\n}}\n")
    dims = lambda s: ", ".join(str(i) for i in range(len(s)))
    loss = (f'func.func @loss({args(True)}, %ws: {_ty(st)} {{kiln.name = "ws"}}, '
            f'%wl: {_ty(la)} {{kiln.name = "wl"}}) -> (tensor<f32> {{kiln.name = "loss"}}) {{\n'
            f"  {rnn}\n"
            f"  %p = kiln.mul %all, %ws : {_ty(st)}, {_ty(st)}\n"
            f"  %q = kiln.mul %last, %wl : {_ty(la)}, {_ty(la)}\n"
            f"  %sp = kiln.reduce_sum %p dims = [{dims(st)}] : {_ty(st)}\n"
            f"  %sq = kiln.reduce_sum %q dims = [{dims(la)}] : {_ty(la)}\n"
            f"  %l = kiln.add %sp, %sq : tensor<f32>, tensor<f32>\n"
            f"  return %l : tensor<f32>\n}}\n")
    return forward, loss


def check_against_kiln_ref(kiln_ref, kiln_opt, gen, failures):
    """The forward (and with kiln-opt the gradients) against kiln-ref in f64."""
    with tempfile.TemporaryDirectory() as tmp:
        for function in SIZES:
            # f32 inputs (what kiln-ref reads); both sides then compute in f64.
            ops = [t.float() for t in random_operands(function, 3, 5, 2, 4, gen)]
            forward, loss = kiln_models(function, [list(t.shape) for t in ops])
            names = ("wx", "r", "b", "s0")
            fwd_path, inputs = os.path.join(tmp, f"{function}.mlir"), os.path.join(tmp, "in.st")
            with open(fwd_path, "w") as f:
                f.write(forward)
            write_safetensors(inputs, dict(zip(names, ops)))
            out = os.path.join(tmp, "out.st")
            subprocess.run([kiln_ref, fwd_path, "--function", "f", "--inputs", inputs,
                            "--precision", "f64", "-o", out], check=True)
            ref = read_safetensors(out)
            ops64 = [t.double().requires_grad_(True) for t in ops]
            states, last = rnn_forward(function, *ops64)
            # kiln-ref writes its f64 results rounded to f32.
            errs = [max_rel(states, ref["states"]), max_rel(last, ref["last"])]
            report(f"{function}: forward vs kiln-ref f64 (states, last)", max(errs), 1e-6, failures)
            if not kiln_opt:
                continue
            ws = torch.randn(states.shape, generator=gen, dtype=torch.float64).float()
            wl = torch.randn(last.shape, generator=gen, dtype=torch.float64).float()
            loss_path, grad_path = os.path.join(tmp, "loss.mlir"), os.path.join(tmp, "grad.mlir")
            with open(loss_path, "w") as f:
                f.write(loss)
            with open(grad_path, "w") as f:
                subprocess.run([kiln_opt, loss_path, "--kiln-autodiff"], stdout=f, check=True)
            write_safetensors(inputs, dict(zip(names + ("ws", "wl"), ops + [ws, wl])))
            subprocess.run([kiln_ref, grad_path, "--function", "loss_grad", "--inputs", inputs,
                            "--precision", "f64", "-o", out], check=True)
            ref = read_safetensors(out)
            value = (states * ws.double()).sum() + (last * wl.double()).sum()
            grads = torch.autograd.grad(value, ops64)
            errs = [max_rel(g, ref[f"grad.{n}"]) for n, g in zip(names, grads)]
            report(f"{function}: gradients vs kiln-ref's rnn_backward (wx, r, b, s0: "
                   + ", ".join(f"{e:.1e}" for e in errs) + ")", max(errs), 1e-6, failures)


def report(what, err, bound, failures):
    ok = err <= bound
    print(f"{'ok  ' if ok else 'FAIL'} {what}: {err:.2e} (bound {bound:g})")
    if not ok:
        failures.append(what)


def self_test(kiln_ref, kiln_opt):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    failures = []
    for function in SIZES:
        ops = random_operands(function, 2, 4, 2, 3, gen, scale=1.5)
        want_states, want_last = loop_reference(function, *ops)
        states, last = rnn_forward(function, *ops)
        report(f"{function}: f64 forward vs the scalar loop",
               max(max_rel(states, want_states), max_rel(last, want_last)), 1e-12, failures)
        s32, l32 = rnn_forward(function, *[t.float() for t in ops])
        assert s32.dtype == torch.float32 and l32.dtype == torch.float32
        report(f"{function}: f32 forward vs the scalar loop",
               max(max_rel(s32, want_states), max_rel(l32, want_last)), 2e-5, failures)
        # bf16 inputs: computed in f32, rounded once at the end.
        bf = [t.to(torch.bfloat16) for t in ops]
        sb, lb = rnn_forward(function, *bf)
        sf, lf = rnn_forward(function, *[t.float() for t in bf])
        assert sb.dtype == torch.bfloat16 and lb.dtype == torch.bfloat16
        same = torch.equal(sb, sf.to(torch.bfloat16)) and torch.equal(lb, lf.to(torch.bfloat16))
        report(f"{function}: bf16 = f32 computation rounded once", 0.0 if same else 1.0, 0.0,
               failures)
        # The last states are the states of the last step.
        report(f"{function}: last = states[:, :, -1]",
               max_rel(last, states[:, :, -1]), 0.0, failures)
        # Backward: autograd against central differences, in f64.
        small = [t.clone().requires_grad_(True)
                 for t in random_operands(function, 2, 3, 2, 2, gen)]
        ok = torch.autograd.gradcheck(lambda *a: rnn_forward(function, *a), small,
                                      eps=1e-6, atol=1e-7, rtol=1e-5, raise_exception=False)
        report(f"{function}: autograd vs finite differences (f64)", 0.0 if ok else 1.0, 0.0,
               failures)
        if torch.cuda.is_available():
            # On the GPU (f32 without TF32, and bf16 inputs) against the loop.
            tf32 = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = False
            sc, lc = rnn_forward(function, *[t.float().cuda() for t in ops])
            sg, lg = rnn_forward(function, *[t.cuda() for t in bf])
            torch.backends.cuda.matmul.allow_tf32 = tf32
            report(f"{function}: f32 forward on the GPU vs the scalar loop",
                   max(max_rel(sc.cpu(), want_states), max_rel(lc.cpu(), want_last)), 2e-5,
                   failures)
            report(f"{function}: bf16 forward on the GPU vs on the CPU",
                   max(max_rel(sg.cpu(), sb), max_rel(lg.cpu(), lb)), 1e-2, failures)
    # Shape errors are reported.
    try:
        wx, r, b, s0 = random_operands("lstm", 1, 2, 1, 2, gen)
        rnn_forward("gru", wx, r, b, s0)
        failures.append("gru accepted lstm's shapes")
    except ValueError:
        pass
    if kiln_ref:
        print(f"kiln-ref: {kiln_ref}" + (f", kiln-opt: {kiln_opt}" if kiln_opt else
                                         " (no kiln-opt: forward only)"))
        check_against_kiln_ref(kiln_ref, kiln_opt, gen, failures)
    else:
        print("kiln-ref not found (--kiln-ref, $KILN_REF, bazel-bin, PATH): "
              "the comparison with the CPU reference is skipped")
    for failure in failures:
        print(f"FAIL: {failure}")
    print("self-test passed" if not failures else f"self-test failed ({len(failures)})")
    return 1 if failures else 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--self-test", action="store_true")
    p.add_argument("--kiln-ref", help="kiln-ref binary for the comparison with the CPU reference")
    p.add_argument("--kiln-opt", help="kiln-opt binary (differentiates the gradient model)")
    args = p.parse_args(argv)
    if not args.self_test:
        p.print_help()
        return 2
    kiln_ref = find_tool(args.kiln_ref, "KILN_REF", "kiln-ref")
    kiln_opt = find_tool(args.kiln_opt, "KILN_OPT", "kiln-opt") if kiln_ref else None
    return self_test(kiln_ref, kiln_opt)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
