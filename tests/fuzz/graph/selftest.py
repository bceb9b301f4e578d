#!/usr/bin/env python3
"""The fuzzer's oracles catch what they are for: each case runs check() on a
generated graph with a stand-in kilnc that breaks one thing, and expects the
finding it must cause; the real kilnc must cause none.

    selftest.py --bin DIR --work DIR
"""
import argparse
import os
import random
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check  # noqa: E402
import gen  # noqa: E402
import gen_core  # noqa: E402
import reduce  # noqa: E402
from graph_ir import Arg, Graph, Op, Value  # noqa: E402
from graph_fuzz import write_junit  # noqa: E402

# Stand-ins for kilnc: "$REAL" is the real one, "$@" kilnc's arguments.
BROKEN = {
    "crash": ("kill -SEGV $$", "compile", "exit status -11"),
    "unlocated error": ('echo "error: something went wrong" >&2; exit 1', "compile",
                        "an error without a location"),
    "error outside the graph": ('echo "/tmp/elsewhere.mlir:3:4: error: bad" >&2; exit 1', "compile",
                                "an error located outside the graph"),
    "internal IR in the error": (
        'echo "$1:2:1: error: bad operand of %0 = kiln.fusion \\"pointwise\\"" >&2; exit 1',
        "compile", "compiler-internal IR"),
    # Every sub of the module before code generation becomes an add: the
    # entries compute something else than the graph.
    "wrong arithmetic": ('"$REAL" "$@" 2> >(sed "s/kiln.sub /kiln.add /" >&2)', "transform", ""),
}
# A stand-in for kiln-opt whose gradients are wrong: in the reference's
# forward_backward every sub becomes an add (the last argument is -o FILE).
# Stand-ins for kiln-ref: one that crashes; one that crashes once, in the
# second run of a batch (after the first's outputs: the crash is the second
# run's, ref_fb's); one whose first run of a batch fails (its error must be
# that run's, ref_forward's, and no other's).
CRASH_IN_SECOND_RUN = ('if [ "$1" = --batch ] && [ ! -e "$2.crashed" ]; then touch "$2.crashed"; '
                       'head -n 1 "$2" > "$2.head"; "$REAL" --batch "$2.head"; kill -SEGV $$; fi; "$REAL" "$@"')
BROKEN_REF = {
    "kiln-ref crash": ("kill -SEGV $$", "reference", "(f64) exit -11: (no output)"),
    "kiln-ref crash in a batch": (CRASH_IN_SECOND_RUN, "reference",
                                  "kiln-ref forward_backward (f64) exit -11: (no output)"),
    "kiln-ref run fails in a batch": ('[ "$1" = --batch ] && sed -i "1s/\tforward\t/\tnope\t/" "$2"; "$REAL" "$@"',
                                      "reference", "kiln-ref forward (f64) exit 1: error: no function 'nope'"),
}
WRONG_GRADIENT = ('"$REAL" "$@" && sed -i "/func.func @forward_backward/,/^  }/s/kiln.sub /kiln.add /" '
                  '"${@: -1}"')


def stand_in(work, name, body, real):
    path = os.path.join(work, name.replace(" ", "_") + ".sh")
    with open(path, "w") as f:
        f.write(f'#!/bin/bash\nREAL="{real}"\n{body}\n')
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def graph_with(op_name):
    """A generated graph that has op_name (for the arithmetic case: a sub
    on the loss's path in every mode)."""
    for i in range(200):
        g = gen.generate(f"selftest:{i}", random.Random(f"selftest:{i}"), only=[op_name, "kiln.tanh"])
        if any(op.name == op_name for op in g.ops) and any(a.kind == "param" for a in g.args):
            return g
    raise RuntimeError(f"no graph with {op_name}")


def parameter_on_a_jump():
    """loss = sum((ceil(p + 0.5) - x)^2) with every element of the
    parameter p drawn as -0.5: the loss jumps at p, so that every direction
    of a central difference crosses the jump, and there is no gradient to
    check (graph 1796624847:62 drew a bf16 parameter onto such a point)."""
    g = Graph("selftest:parameter on a jump")
    t = "tensor<4x2xf32>"
    p = Value("p", (4, 2), "f32", active=True)
    x = Value("x", (4, 2), "f32")
    g.args = [Arg(p, "param", ("uniform", -0.5, -0.5), "#kiln.init<constant, value = 0.25>"),
              Arg(x, "input", ("uniform", -1.0, 1.0))]
    half, shifted, up = Value("half", (), "f32"), Value("shifted", (4, 2), "f32"), Value("up", (4, 2), "f32")
    g.loss = Value("total", (), "f32", active=True)
    g.ops = [Op("kiln.constant", [], [half], "kiln.constant dense<0.5> : tensor<f32>"),
             Op("kiln.add", [p, half], [shifted], f"kiln.add {{0}}, {{1}} : {t}, tensor<f32>"),
             Op("kiln.ceil", [shifted], [up], f"kiln.ceil {{0}} : {t}"),
             Op("kiln.mse_loss", [up, x], [g.loss], f"kiln.mse_loss {{0}}, {{1}} reduction = sum : {t}")]
    return g


def parameter_near_a_kink():
    """loss = sum(min(x, p)) with x one f32 step above p (0.5): every
    direction of 1e-6 crosses min's kink, where the gradient changes from
    1 to 0; a thousand times shorter ones do not, and agree with it (graph
    1796624847:4260 drew an input 3e-8 from a min's other operand)."""
    g = Graph("selftest:parameter near a kink")
    t = "tensor<4x2xf32>"
    p = Value("p", (4, 2), "f32", active=True)
    x = Value("x", (4, 2), "f32")
    g.args = [Arg(p, "param", ("uniform", 0.5, 0.5), "#kiln.init<constant, value = 0.25>"),
              Arg(x, "input", ("uniform", 0.50000006, 0.50000006))]
    low = Value("low", (4, 2), "f32")
    g.loss = Value("total", (), "f32", active=True)
    g.ops = [Op("kiln.min", [x, p], [low], f"kiln.min {{0}}, {{1}} : {t}, {t}"),
             Op("kiln.reduce_sum", [low], [g.loss], f"kiln.reduce_sum {{0}} dims = [0, 1] : {t}")]
    return g


def max_pool_of_bf16():
    """A max pool of a bf16 parameter whose values tie (here all are 0.5;
    bf16's few values tie in some windows of graph 1796629020:66): kinks
    where a central difference and the gradient differ, unless the
    gradients are checked off bf16's grid."""
    g = Graph("selftest:max pool of bf16")
    p = Value("p", (6, 6, 3, 3), "bf16", active=True)
    pooled, mean = Value("pooled", (6, 6, 1, 2), "bf16", active=True), Value("mean", (), "bf16", active=True)
    g.args = [Arg(p, "param", ("uniform", 0.5, 0.5), "#kiln.init<uniform, low = -1.0, high = 1.0>")]
    g.loss = Value("total", (), "f32", active=True)
    g.ops = [Op("kiln.max_pool2d", [p], [pooled], "kiln.max_pool2d {0} layout = nchw kernel = [2, 3] stride = [3, 1] "
                "padding = [0, 1, 0, 1] : tensor<6x6x3x3xbf16>"),
             Op("kiln.reduce_mean", [pooled], [mean], "kiln.reduce_mean {0} dims = [0, 1, 2, 3] : tensor<6x6x1x2xbf16>"),
             Op("kiln.cast", [mean], [g.loss], "kiln.cast {0} : tensor<bf16> to tensor<f32>")]
    return g


def argmax_of_ties():
    """The argmax of a layer norm's row means (all 0 but for rounding) as an
    output: f32 rounding picks its winner as arbitrarily as moving the
    inputs by their rounding does, which is no precision finding (graph
    1796624847:3706)."""
    g = Graph("selftest:argmax of ties")
    t = "tensor<4x8xf32>"
    p, x = Value("p", (4, 8), "f32", active=True), Value("x", (4, 8), "f32")
    g.args = [Arg(p, "param", ("uniform", -1.0, 1.0), "#kiln.init<constant, value = 0.25>"),
              Arg(x, "input", ("uniform", -1.0, 1.0))]
    normed, means = Value("normed", (4, 8), "f32", active=True), Value("means", (4, 1), "f32", active=True)
    winner, g.loss = Value("winner", (1,), "i32"), Value("total", (), "f32", active=True)
    g.outputs = [winner]
    g.ops = [Op("kiln.layer_norm", [p], [normed], f"kiln.layer_norm {{0}} dims = 1 : {t}"),
             Op("kiln.reduce_mean", [normed], [means], f"kiln.reduce_mean {{0}} dims = [1] keepdim : {t}"),
             Op("kiln.argmax", [means], [winner], "kiln.argmax {0} dim = 0 : tensor<4x1xf32>"),
             Op("kiln.mse_loss", [normed, x], [g.loss], f"kiln.mse_loss {{0}}, {{1}} : {t}")]
    return g


def argmax_of_rounded_ties():
    """The argmax of an RMS norm over a dimension of one, whose outputs
    x / sqrt(x^2 + eps) * w are w up to eps / 2x^2: for |x| of 20 to 40 f64
    still orders them and f32 rounds them all to w, so the unfused entries'
    own f32 rounding picks another winner than f64 while moving the inputs
    picks none (graph 1796642084:16709)."""
    g = Graph("selftest:argmax of rounded ties")
    t = "tensor<2x2x4x1xf32>"
    x, p = Value("x", (2, 2, 4, 1), "f32"), Value("p", (1,), "f32", active=True)
    g.args = [Arg(x, "input", ("uniform", 20.0, 40.0)),
              Arg(p, "param", ("uniform", 0.5, 1.0), "#kiln.init<constant, value = 0.25>")]
    normed, winner = Value("normed", (2, 2, 4, 1), "f32", active=True), Value("winner", (2, 1, 4, 1), "i32")
    g.loss = Value("total", (), "f32", active=True)
    g.outputs = [winner]
    g.ops = [Op("kiln.rms_norm", [x, p], [normed], f"kiln.rms_norm {{0}}, {{1}} : {t}, tensor<1xf32>"),
             Op("kiln.argmax", [normed], [winner], f"kiln.argmax {{0}} dim = 1 keepdim : {t}"),
             Op("kiln.reduce_sum", [normed], [g.loss], f"kiln.reduce_sum {{0}} dims = [0, 1, 2, 3] : {t}")]
    return g


def loss_that_cancels():
    """loss = sum(broadcast(sum(layer_norm(p)))), 0 for every p in exact
    arithmetic: f64 leaves rounding noise of 1e-14, f32 one of 1e-6, and
    moving p does not move the loss (graph 1796630925:47)."""
    g = Graph("selftest:loss that cancels")
    p = Value("p", (5,), "f32", active=True)
    g.args = [Arg(p, "param", ("uniform", -1.0, 1.0), "#kiln.init<constant, value = 0.25>")]
    normed, total = Value("normed", (5,), "f32", active=True), Value("total", (), "f32", active=True)
    spread, g.loss = Value("spread", (5, 8), "f32", active=True), Value("loss", (), "f32", active=True)
    g.ops = [Op("kiln.layer_norm", [p], [normed], "kiln.layer_norm {0} dims = 1 eps = 1.0e-05 : tensor<5xf32>"),
             Op("kiln.reduce_sum", [normed], [total], "kiln.reduce_sum {0} dims = [0] : tensor<5xf32>"),
             Op("kiln.broadcast_to", [total], [spread], "kiln.broadcast_to {0} : tensor<f32> -> tensor<5x8xf32>"),
             Op("kiln.reduce_sum", [spread], [g.loss], "kiln.reduce_sum {0} dims = [0, 1] : tensor<5x8xf32>")]
    return g


def sign_of_exact_zero():
    """loss = p + sum(sign(dx)), dx the batch norm backward of tanh(iota)
    (every channel constant) with dy = its input: dx is 0 in exact
    arithmetic, f64 leaves noise whose signs add up to a few, f32 none
    (graph 1796630925:4554); the iota does not move with the arguments."""
    g = Graph("selftest:sign of an exact zero")
    t = "tensor<2x2x5xf32>"
    gamma, p = Value("gamma", (2,), "f32"), Value("p", (), "f32", active=True)
    g.args = [Arg(gamma, "input", ("uniform", 0.5, 2.0)),
              Arg(p, "param", ("uniform", -1.0, 1.0), "#kiln.init<constant, value = 0.25>")]
    ramp, level = Value("ramp", (2, 2, 5), "f32", lo=0, hi=1), Value("level", (2, 2, 5), "f32")
    dx, dgamma, dbeta = Value("dx", (2, 2, 5), "f32"), Value("dgamma", (2,), "f32"), Value("dbeta", (2,), "f32")
    signs, total = Value("signs", (2, 2, 5), "f32"), Value("total", (), "f32")
    g.loss = Value("loss", (), "f32", active=True)
    g.ops = [Op("kiln.iota", [], [ramp], f"kiln.iota dim = 1 : {t}"),
             Op("kiln.tanh", [ramp], [level], f"kiln.tanh {{0}} : {t}"),
             Op("kiln.batch_norm_backward", [level, level, gamma], [dx, dgamma, dbeta],
                f"kiln.batch_norm_backward {{0}}, {{1}}, {{2}} eps = 1.0e-06 : {t}, tensor<2xf32>"),
             Op("kiln.sign", [dx], [signs], f"kiln.sign {{0}} : {t}"),
             Op("kiln.reduce_sum", [signs], [total], f"kiln.reduce_sum {{0}} dims = [0, 1, 2] : {t}"),
             Op("kiln.add", [p, total], [g.loss], "kiln.add {0}, {1} : tensor<f32>, tensor<f32>")]
    return g


def negated_labels_are_no_index():
    """kiln.neg of labels in [0, 4) must not be drawn as an index (graph
    1796624847:3475 fed one to an embedding)."""
    g = gen_core.Gen(random.Random(0), "selftest")
    labels = g.leaf((4,), "i32", bound=4)
    negated = g.unary("kiln.neg", labels, -labels.hi, -labels.lo)
    absolute = g.unary("kiln.abs", labels, 0, labels.hi)
    return labels.bound == 4 and negated.bound is None and absolute.bound == 4


def reduction_beside_another(graph, other, tools, work):
    """Reduces `graph`, whose compile crashes (a stand-in kilnc crashes on
    every kiln.sub), in `work` while another reduction in the same folder
    writes its own graph where this one's was before each compile: the
    reduction must still see its own graph and keep the crash (reductions
    of graphs 1796630925:47, :4035 and :4554 side by side read each other's
    files and stopped). True when it did."""
    shared = os.path.join(work, "shared")
    os.makedirs(os.path.join(shared, "try"), exist_ok=True)
    other_path = os.path.join(work, "other.mlir")
    with open(other_path, "w") as f:
        f.write(other.text())
    body = (f'cp "{other_path}" "{shared}/try/graph.mlir"\n'
            'grep -q "kiln.sub " "$1" && kill -SEGV $$\n"$REAL" "$@"')
    crashing = stand_in(work, "crash on sub beside another", body, tools.kilnc)
    reduced, finding = reduce.reduce(graph, check.Tools(crashing, tools.kiln_opt, tools.kiln_ref), shared, 1)
    return (reduced is not None and "kiln.sub " in reduced.text() and len(reduced.ops) < len(graph.ops)
            and finding[0] == "compile" and "exit status -11" in finding[2])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--junit")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    real = os.path.join(args.bin, "kilnc")
    graph = graph_with("kiln.sub")
    cases = []

    def record(name, ok, detail):
        cases.append((name, "" if ok else detail))
        print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}")

    def tools(kilnc, kiln_opt=os.path.join(args.bin, "kiln-opt"), kiln_ref=os.path.join(args.bin, "kiln-ref")):
        return check.Tools(kilnc, kiln_opt, kiln_ref)

    result = check.check(graph, tools(real), os.path.join(args.work, "real"), 1)
    record("the real kilnc", not result.findings and result.checks > 0,
           f"{result.findings or 'no findings'}, {result.checks} comparisons")
    for name, (body, kind, text) in BROKEN.items():
        kilnc = stand_in(args.work, name, body, real)
        result = check.check(graph, tools(kilnc), os.path.join(args.work, name.replace(" ", "_")), 1)
        record(name, any(f[0] == kind and text in f[2] for f in result.findings),
               f"expected a {kind} finding with '{text}', got {result.findings or 'none'}")
    for name, (body, kind, text) in BROKEN_REF.items():
        kiln_ref = stand_in(args.work, name, body, os.path.join(args.bin, "kiln-ref"))
        result = check.check(graph, tools(real, kiln_ref=kiln_ref), os.path.join(args.work, name.replace(" ", "_")), 1)
        record(name, any(f[0] == kind and text in f[2] for f in result.findings),
               f"expected a {kind} finding with '{text}', got {result.findings or 'none'}")
    record("negated labels are no index", negated_labels_are_no_index(),
           "kiln.neg of a bounded i32 value kept its index bound")
    for seed in range(1, 9):  # (f32 rounding moves the winner for some inputs)
        result = check.check(argmax_of_ties(), tools(real), os.path.join(args.work, "ties"), seed)
        if result.findings:
            break
    record("an argmax of ties", not result.findings and result.checks > 0,
           f"expected no findings, got {result.findings or 'none'}, {result.checks} comparisons")
    result = check.check(max_pool_of_bf16(), tools(real), os.path.join(args.work, "max_pool"), 1)
    record("a max pool of bf16 values", not result.findings and result.checks > 0,
           f"expected no findings, got {result.findings or 'none'}, {result.checks} comparisons")
    result = check.check(parameter_on_a_jump(), tools(real), os.path.join(args.work, "on_a_jump"), 1)
    record("a parameter on a jump", not result.findings and result.checks > 0,
           f"expected no findings, got {result.findings or 'none'}, {result.checks} comparisons")
    result = check.check(parameter_near_a_kink(), tools(real), os.path.join(args.work, "near_a_kink"), 1)
    record("a parameter near a kink", not result.findings and result.checks > 0,
           f"expected no findings, got {result.findings or 'none'}, {result.checks} comparisons")
    record("a reduction beside another", reduction_beside_another(graph, parameter_near_a_kink(), tools(real),
                                                                  os.path.join(args.work, "reduce")),
           "expected the reduction to keep its own graph's crash")
    for name, graph_of in (("a loss that cancels", loss_that_cancels), ("a sign of an exact zero", sign_of_exact_zero),
                           ("an argmax of values tied by rounding", argmax_of_rounded_ties)):
        result = check.check(graph_of(), tools(real), os.path.join(args.work, name.replace(" ", "_")), 1)
        record(name, not result.findings and result.checks > 0,
               f"expected no findings, got {result.findings or 'none'}, {result.checks} comparisons")
    kiln_opt = stand_in(args.work, "wrong gradient", WRONG_GRADIENT, os.path.join(args.bin, "kiln-opt"))
    result = check.check(graph, tools(real, kiln_opt), os.path.join(args.work, "wrong_gradient"), 1)
    record("wrong gradient", any(f[0] == "autodiff" for f in result.findings),
           f"expected an autodiff finding, got {result.findings or 'none'}")
    if args.junit:
        write_junit(args.junit, "graph_fuzz_selftest", [(n, f"self-test: {d}" if d else "") for n, d in cases])
    return 1 if any(d for _, d in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
