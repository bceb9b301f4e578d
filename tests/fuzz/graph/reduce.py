"""Cuts a graph with a finding down to a small one with the same finding.

Greedy, one change at a time, kept when the graph still verifies and the
finding (same check and mode, and for compile findings the same kind of
failure) still comes: an op replaced by inputs of its results' types, an op
bypassed (its result replaced by an operand of the same type), a parameter
made an input, an output dropped; dead ops and unused arguments go after
each change. Then every dimension size is tried smaller, throughout the
text at once (the result must still verify).

Every reduction works in a folder of its own under `work`, so that
reductions sharing one --work (several at once) never read each other's
files: graphs 1796630925:47, :4035 and :4554, reduced side by side, read
each other's compiled entries and references, whose arguments their
inputs did not fit.
"""
import copy
import os
import re
import shutil
import subprocess
import tempfile

import check
from graph_ir import Arg


def signature(finding):
    kind, mode, detail = finding
    if kind == "refusal":
        return kind, mode, re.sub(r"\d+|'[^']*'", "", detail.split(":", 1)[1])
    if kind == "compile":
        # The kind of failure, not its text (exit status, timeout, location).
        return kind, mode, detail.split(":")[0]
    return kind, mode


def modes_for(finding):
    kind, mode, _ = finding
    return (mode,) if mode in check.MODES else ("f32_sgd",)


def as_input(value):
    if value.dtype == "i32":
        draw = ("int", 0, value.bound) if value.bound else ("int", -4, 5)
    elif value.dtype == "i1":
        draw = ("bool",)
    elif value.lo >= 0.1:
        draw = ("uniform", 0.5, 2.0)
    elif value.lo >= 0 and value.hi <= 1:
        draw = ("uniform", 0.0, 1.0)
    else:
        draw = ("uniform", -1.0, 1.0)
    return Arg(value, "input", draw)


def candidates(graph):
    """Smaller graphs, largest cuts first."""
    n = len(graph.ops)
    for i in reversed(range(n)):
        def replace(g, i=i):
            op = g.ops.pop(i)
            g.args.extend(as_input(v) for v in op.results)
        yield replace
    for i in reversed(range(n)):
        op = graph.ops[i]
        for r, result in enumerate(op.results):
            for k, operand in enumerate(op.operands):
                if operand.type == result.type:
                    def bypass(g, i=i, r=r, k=k):
                        old, new = g.ops[i].results[r], g.ops[i].operands[k]
                        for other in g.ops:
                            other.operands = [new if v is old else v for v in other.operands]
                        g.outputs = [new if v is old else v for v in g.outputs]
                        if g.loss is old:
                            g.loss = new
                    yield bypass
                    break
    for i, a in enumerate(graph.args):
        if a.kind == "param" and sum(x.kind == "param" for x in graph.args) > 1:
            def unparam(g, i=i):
                g.args[i].kind = "input"
            yield unparam
    for i in range(len(graph.outputs)):
        def drop(g, i=i):
            del g.outputs[i]
        yield drop


def verifies(tools, graph, work):
    path = os.path.join(work, "candidate.mlir")
    with open(path, "w") as f:
        f.write(graph.text())
    return subprocess.run([tools.kiln_opt, path, "-o", os.devnull], capture_output=True).returncode == 0


def reproduces(tools, graph, work, seed, want, modes):
    result = check.check(graph, tools, os.path.join(work, "try"), seed, modes)
    return next((f for f in result.findings if signature(f) == want), None)


def reduce(graph, tools, work, seed, check_name=None, mode=None):
    """(reduced graph, its finding), or (None, None) without a finding."""
    os.makedirs(work, exist_ok=True)
    own = tempfile.mkdtemp(prefix="reduce-", dir=work)
    try:
        return reduce_in(graph, tools, own, seed, check_name, mode)
    finally:
        shutil.rmtree(own, ignore_errors=True)


def reduce_in(graph, tools, work, seed, check_name, mode):
    result = check.check(graph, tools, os.path.join(work, "try"), seed)
    found = [f for f in result.findings
             if (check_name is None or f[0] == check_name) and (mode is None or f[1] == mode)]
    if not found:
        return None, None
    finding, want = found[0], signature(found[0])
    modes = modes_for(finding)
    progress = True
    while progress:
        progress = False
        for change in candidates(graph):
            trial = copy.deepcopy(graph)
            change(trial)
            trial.remove_dead()
            if trial.loss is None or not trial.ops or trial.text() == graph.text():
                continue
            if not verifies(tools, trial, work):
                continue
            again = reproduces(tools, trial, work, seed, want, modes)
            if again:
                graph, finding, progress = trial, again, True
                break
    graph = shrink_dims(graph, tools, work, seed, want, modes)
    return graph, finding


def with_size(graph, d, smaller):
    """A copy of graph with every dimension of size d made `smaller`."""
    g = copy.deepcopy(graph)
    pattern = re.compile(rf"(?<=[<x]){d}(?=x)")
    values = {id(a.value): a.value for a in g.args}
    for op in g.ops:
        op.fmt = pattern.sub(str(smaller), op.fmt)
        values.update((id(v), v) for v in op.results)
    for v in values.values():
        v.shape = tuple(smaller if s == d else s for s in v.shape)
    return g


def shrink_dims(graph, tools, work, seed, want, modes):
    """Every size d > 1 of the types replaced by a smaller one everywhere,
    kept where the graph verifies and the finding stays."""
    sizes = sorted({int(d) for d in re.findall(r"(?<=[<x])(\d+)(?=x)", graph.text()) if int(d) > 1},
                   reverse=True)
    for d in sizes:
        for smaller in sorted({1, 2, d // 2}):
            if not 1 <= smaller < d:
                continue
            trial = with_size(graph, d, smaller)
            if verifies(tools, trial, work) and reproduces(tools, trial, work, seed, want, modes):
                graph = trial
                break
    return graph
