"""The oracles of one generated graph.

check(graph, tools, work, seed) runs, for the graph's .mlir:
  compile     kilnc in three modes (--inference; --train=sgd;
              --train=adamw --precision=bf16), to CUDA C++ (--emit=cuda, no
              NVRTC) or, with tools.nvrtc, to an artifact; each either
              compiles or fails with an error located at a line of the graph
              (never a crash, a hang, an error without a location or one that
              shows compiler-internal IR). kilnc also prints the module
              before code generation (--mlir-print-ir-before=kiln-emit-cuda):
              the entries, differentiated, in mixed precision and fused.
  references  kiln-opt builds the same entries without fusion or memory
              planning: --kiln-make-train-step (sgd, f32) and, for bf16,
              --kiln-mixed-precision before it (adamw).
  transform   every compiled mode's entries against the reference's on
              kiln-ref in f64, on the same fresh random inputs: forward for
              inference, forward_backward (loss, every gradient, updated
              state) for training and train_step for AdamW; they may differ
              only by rounding of the outputs.
  autodiff    the reference's gradients against a central difference of the
              graph's loss in f64 along a random direction.
  precision   the compiled entries on kiln-ref with the GPU's rounding (every
              op's result stored in its type) against the f64 reference,
              within a tolerance per precision.
A finding is (check, mode, detail); refusals (located errors) of valid
graphs are findings unless expected or known (EXPECTED_REFUSALS,
KNOWN_OPEN); precision misses under bf16 or f16 rounding are advisories.
"""
import math
import os
import re
import time

import numpy as np

import modules
import ref_batch
import tensors
from process import TIMEOUT_S, first_line, run  # noqa: F401 (bundle.py's too)

MODES = {
    "inference": ["--inference"],
    "f32_sgd": ["--train=sgd"],
    "bf16_adamw": ["--train=adamw", "--precision=bf16"],
}
# Relative tolerances of the precision check (norm of the difference over
# the norm of the f64 value, per output).
PRECISION_RTOL = {"f32": 1e-3, "f16": 2e-2, "bf16": 0.1}
# Ops whose result jumps: bf16 rounding moves their inputs across the jump
# (and casts to i32 or i1).
DISCONTINUOUS = ("kiln.floor", "kiln.ceil", "kiln.round", "kiln.sign", "kiln.compare",
                 "kiln.argmax")
# Located errors that are the graph's own fault or a documented limit, each
# with why; any other refusal of a generated (valid) graph is a finding.
EXPECTED_REFUSALS = {
    r"op has no gradient rule, but the loss depends on it": "a backward op on a parameter's path "
    "(the generator keeps them off it; the reducer may not)",
    r"has no gradient through its row log-sum-exp": "the loss depends on an attention's row "
    "log-sum-exp through a parameter (likewise)",
}
# Refusals of valid graphs that are known and open, each with the test that
# shows it (XFAIL until it is fixed): counted apart, not as findings.
KNOWN_OPEN = {}


class Tools:
    def __init__(self, kilnc, kiln_opt, kiln_ref, nvrtc=False, kernel_cache=None):
        self.kilnc, self.kiln_opt, self.kiln_ref = kilnc, kiln_opt, kiln_ref
        self.nvrtc = nvrtc
        self.kernel_cache = kernel_cache


class Result:
    def __init__(self):
        self.findings = []  # (check, mode, detail)
        self.known = []  # (mode, test of the known open refusal)
        self.advisories = []  # precision misses under bf16 or f16 rounding
        self.outcomes = {}  # mode -> "compiled" | "refused: TEXT" | "failed"
        self.checks = 0  # comparisons made
        self.seconds = 0.0

    def find(self, check, mode, detail):
        self.findings.append((check, mode, detail))


# --- compile ------------------------------------------------------------------

def located_at_user_op(path, graph_text, diagnostics):
    """None if every error names a line of the graph's function, else why
    not."""
    errs = modules.errors(diagnostics)
    if not errs:
        return "no error diagnostic: " + first_line(diagnostics)
    lines = graph_text.splitlines()
    for file, line, _, text in errs:
        if file is None:
            return "an error without a location: " + text
        if os.path.basename(file) != os.path.basename(path) or not 1 <= line <= len(lines):
            return f"an error located outside the graph: {file}:{line}: {text}"
        src = lines[line - 1]
        if " = kiln." not in src and "func.func" not in src and ": tensor<" not in src:
            return f"an error at line {line}, which is no op of the graph: {text}"
    for marker in ("kiln.fusion", "UNKNOWN SSA VALUE", "kiln.buffer"):
        if marker in diagnostics:
            return f"the diagnostic shows compiler-internal IR ({marker}): " + first_line(diagnostics)
    return None


def compile_mode(tools, path, graph_text, mode, work, result):
    """The module kilnc had before code generation, or None."""
    out = os.path.join(work, f"{mode}.{'kiln' if tools.nvrtc else 'cu'}")
    cmd = [tools.kilnc, path, *MODES[mode], "--mlir-print-ir-before=kiln-emit-cuda", "-o", out]
    cmd += [f"--kernel-cache={tools.kernel_cache}"] if tools.nvrtc and tools.kernel_cache else []
    cmd += [] if tools.nvrtc else ["--emit=cuda"]
    status, _, stderr = run(cmd)
    module, diagnostics = modules.split_dump(stderr)
    if status == 0:
        result.outcomes[mode] = "compiled"
        if module is None:
            result.find("compile", mode, "kilnc succeeded but printed no module before code generation")
        return module
    if status == 1:
        why = located_at_user_op(path, graph_text, diagnostics)
        if why is None:
            err = modules.errors(diagnostics)[0]
            result.outcomes[mode] = "refused: " + err[3]
            known = [t for p, t in KNOWN_OPEN.items() if re.search(p, err[3])]
            if known:
                result.known.append((mode, known[0]))
            elif not any(re.search(p, err[3]) for p in EXPECTED_REFUSALS):
                result.find("refusal", mode, f"line {err[1]}: {err[3]}")
            return None
        result.outcomes[mode] = "failed"
        result.find("compile", mode, why)
        return None
    result.outcomes[mode] = "failed"
    kind = "timed out" if status is None else f"exit status {status}"
    tail = [l for l in diagnostics.splitlines() if l.strip()][-3:]
    result.find("compile", mode, f"kilnc {kind}: " + " | ".join(tail)[:400])
    return None


# --- inputs -------------------------------------------------------------------

def uniform(rng, lo, hi, shape, dtype="f32"):
    """Uniform values in [lo, hi) in `dtype`. f32 values use all 24 bits,
    so that a sum of two is almost never exactly 0 and a value almost never
    an integer: floor, relu, max or a comparison do not sit on their jumps
    or kinks, where a central difference and a one-sided gradient differ."""
    return tensors.round_to(rng.uniform(lo, hi, size=shape), dtype)


def draw_inputs(graph, rng):
    """{argument name: float64 or int array} by each argument's draw."""
    values = {}
    for a in graph.args:
        shape = a.value.shape
        kind = a.draw[0]
        if kind == "uniform":
            values[a.value.name] = uniform(rng, a.draw[1], a.draw[2], shape, a.value.dtype)
        elif kind == "int":
            values[a.value.name] = rng.integers(a.draw[1], a.draw[2], size=shape).astype(np.int32)
        else:
            values[a.value.name] = rng.integers(0, 2, size=shape).astype(bool)
    return values


def entry_inputs(sig_args, values, extra):
    """The tensors an entry takes, in each argument's type: the graph's
    arguments by name, the rest (optimizer state, lr, step) from `extra`."""
    out = {}
    for name, shape, dtype, _ in sig_args:
        source = values.get(name)
        if source is None:
            source = extra(name, shape)
        out[name] = (dtype, tensors.round_to(np.broadcast_to(source, shape), dtype))
    return out


def optimizer_state(rng):
    cache = {}

    def extra(name, shape):
        if name not in cache:
            if name == "lr":
                cache[name] = np.array(0.01)
            elif name == "step":
                cache[name] = np.array(3, np.int32)
            elif name.startswith("adam_v."):
                cache[name] = uniform(rng, 0.01, 0.1, shape)
            else:
                cache[name] = uniform(rng, -0.1, 0.1, shape)
        return cache[name]
    return extra


def evaluate(tools, module_path, function, inputs, precision, work, tag):
    """kiln-ref's outputs {name: array}, or the error text."""
    return ref_batch.evaluate(tools.kiln_ref, module_path, function, inputs, precision, work, tag)


# --- comparisons ----------------------------------------------------------------

ULP = {"f32": 2.0 ** -23, "bf16": 2.0 ** -7, "f16": 2.0 ** -10, "i32": 0, "i1": 0}


def same_specials(a, b):
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    inf = np.isinf(a) | np.isinf(b)
    return np.array_equal(a[inf], b[inf])


def compare_tight(name, got, want, dtype):
    """None if got equals want up to two ulps of the output type (and a
    millionth of the tensor's largest magnitude for values that cancel)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    if not same_specials(got, want):
        return f"{name}: NaN or infinity at other elements"
    fin = np.isfinite(want)
    g, w = got[fin], want[fin]
    if g.size == 0:
        return None
    atol = max(1e-6 * np.max(np.abs(w)), 1e-12)
    err = np.abs(g - w) - (2 * ULP[dtype] * np.abs(w) + atol)
    if dtype in ("i32", "i1"):
        err = np.abs(g - w)
    if np.max(err) > 0:
        i = int(np.argmax(err))
        idx = np.unravel_index(np.flatnonzero(fin)[i], want.shape)
        return f"{name}{list(idx)}: {g[i]:.9g}, expected {w[i]:.9g}"
    return None


def compare_norm(name, got, want, rtol, floor):
    """None if ||got - want|| <= rtol * max(||want||, floor)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    if not same_specials(got, want):
        return f"{name}: NaN or infinity at other elements"
    fin = np.isfinite(want)
    diff = np.linalg.norm(got[fin] - want[fin])
    scale = max(np.linalg.norm(want[fin]), floor, 1e-30)
    if diff > rtol * scale:
        return f"{name}: relative difference {diff / scale:.3g} (tolerance {rtol:g})"
    return None


def compare_outputs(result, check, mode, got, want, types, precision_rtol=None):
    """Compares every output of `want` with `got`'s of the same name."""
    if isinstance(got, str) or isinstance(want, str):
        result.find(check, mode, got if isinstance(got, str) else want)
        return
    names = sorted(want)
    floor = 0.0
    if precision_rtol is not None:
        # A gradient that is zero up to rounding (cancelling terms) is
        # compared with a hundredth of the norm of all outputs.
        floor = 1e-2 * math.sqrt(sum(float(np.sum(np.nan_to_num(np.asarray(want[n], np.float64)) ** 2))
                                     for n in names if np.asarray(want[n]).dtype.kind == "f"))
    for name in names:
        if name not in got:
            result.find(check, mode, f"no output '{name}'")
            return
        result.checks += 1
        if precision_rtol is None:
            why = compare_tight(name, got[name], want[name], types.get(name, "f32"))
        elif np.asarray(want[name]).dtype.kind != "f":
            why = compare_tight(name, got[name], want[name], "i32")
        else:
            rtol = precision_rtol[name] if isinstance(precision_rtol, dict) else precision_rtol
            why = compare_norm(name, got[name], want[name], rtol, floor)
        if why:
            result.find(check, mode, why)
            return


# --- the check ----------------------------------------------------------------

def check(graph, tools, work, seed, modes=tuple(MODES)):
    start = time.monotonic()
    result = Result()
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "graph.mlir")
    text = graph.text()
    with open(path, "w") as f:
        f.write(text)
    compiled = {}
    for mode in modes:
        module = compile_mode(tools, path, text, mode, work, result)
        if module is not None:
            compiled[mode] = os.path.join(work, f"{mode}.mlir")
            with open(compiled[mode], "w") as f:
                f.write(module)
    if compiled:
        differential(graph, tools, work, seed, compiled, result)
    result.seconds = time.monotonic() - start
    return result


def reference(tools, path, passes, out, result, mode):
    status, _, stderr = run([tools.kiln_opt, path, *passes, "-o", out])
    if status == 0:
        return out
    if status == 1 and located_at_user_op(path, open(path).read(), stderr) is None:
        # kilnc compiled what the same passes refuse.
        result.find("reference", mode, "kiln-opt refuses what kilnc compiled: " + first_line(stderr))
    else:
        result.find("reference", mode, f"kiln-opt exit {status}: " + first_line(stderr))
    return None


def references(graph, tools, work, compiled, result):
    """The entries kiln-opt builds without fusion or memory planning:
    {"sgd": forward (and forward_backward when training), "bf16": the bf16
    AdamW step's, "promoted": the graph's with every type f32}, each there
    when needed and built; None without the first."""
    path = os.path.join(work, "graph.mlir")
    if "f32_sgd" in compiled or "bf16_adamw" in compiled:
        ref_sgd = reference(tools, path, ["--kiln-make-train-step=function=loss optimizer=sgd"],
                            os.path.join(work, "ref_sgd.mlir"), result, "f32_sgd")
    else:  # Training refused: the inference entry alone.
        ref_sgd = reference(tools, path, ["--kiln-make-forward=function=loss"],
                            os.path.join(work, "ref_forward.mlir"), result, "inference")
    if ref_sgd is None:
        return None
    refs = {"sgd": ref_sgd}
    if "forward_backward" in open(ref_sgd).read() and narrowest_type(graph) != "f32":
        refs["promoted"] = promoted_reference(graph, tools, work, result)
    if "bf16_adamw" in compiled:
        refs["bf16"] = reference(tools, path, ["--kiln-mixed-precision=function=loss precision=bf16",
                                               "--kiln-make-train-step=function=loss optimizer=adamw"],
                                 os.path.join(work, "ref_bf16.mlir"), result, "bf16_adamw")
    return refs


def differential(graph, tools, work, seed, compiled, result):
    """Every kiln-ref run the comparisons need is made by one kiln-ref
    process (ref_batch.py); only those a miss asks for (a second direction
    of the central difference, the perturbed inputs of a precision miss)
    run later on their own."""
    rng = np.random.default_rng(seed)
    values = draw_inputs(graph, rng)
    refs = references(graph, tools, work, compiled, result)
    if refs is None:
        return
    ref_sgd = refs["sgd"]
    training = "forward_backward" in open(ref_sgd).read()
    discontinuous = has_jumps(graph)
    narrow = narrowest_type(graph)
    batch = ref_batch.RefBatch(tools.kiln_ref, work)
    types = {}

    def queue(tag, module_path, function, precision, extra=None, arguments=values):
        sig = modules.signature(open(module_path).read(), function)
        if sig is None:
            batch.results[tag] = f"{module_path} has no function @{function}"
            return
        batch.add(tag, module_path, function, entry_inputs(sig[0], arguments, extra or zeros), precision)
        types[tag] = {name: dtype for name, _, dtype in sig[1]}

    queue("ref_forward", ref_sgd, "forward", "f64")
    if training:
        queue("ref_fb", ref_sgd, "forward_backward", "f64")
    differences = None
    if training and (narrow == "f32" or refs.get("promoted")):
        generic = values if narrow == "f32" else off_the_grid(graph, values, rng)
        if narrow != "f32":
            queue("promoted_fb", refs["promoted"], "forward_backward", "f64", arguments=generic)
        differences = CentralDifferences(graph, tools, work, generic, rng)
        differences.queue(batch)
    for mode, function, tag in (("inference", "forward", "inf"), ("f32_sgd", "forward_backward", "sgd")):
        if mode in compiled:
            queue(f"{tag}_f64", compiled[mode], function, "f64")
            queue(f"{tag}_f32", compiled[mode], function, "f32")
    if refs.get("bf16"):
        module = compiled["bf16_adamw"]
        queue("ref_bf16_fb", refs["bf16"], "forward_backward", "f64")
        queue("bf16_f64", module, "forward_backward", "f64")
        state = optimizer_state(np.random.default_rng(seed + 1))
        queue("ref_bf16_step", refs["bf16"], "train_step", "f64", state)
        queue("bf16_step", module, "train_step", "f64", state)
        if not discontinuous:
            queue("bf16_f32", module, "forward_backward", "f32")
    batch.run()

    def perturbed(function):
        """The reference's outputs in `precision` (f64, or f32: every op's
        result stored in its type) with every float argument moved by a
        relative eps in a random direction; for a tuple of precisions, a
        tuple of outputs at the same moved arguments."""
        def outputs(eps, precision="f64"):
            moved = {k: v * (1 + eps * rng.uniform(-1, 1, np.shape(v))) if np.asarray(v).dtype.kind == "f"
                     else v for k, v in values.items()}
            sig = modules.signature(open(ref_sgd).read(), function)
            inputs = entry_inputs(sig[0], moved, zeros)
            if isinstance(precision, str):
                return evaluate(tools, ref_sgd, function, inputs, precision, work, "perturbed")
            runs = ref_batch.RefBatch(tools.kiln_ref, work)
            for p in precision:
                runs.add(f"perturbed_{p}", ref_sgd, function, inputs, p)
            runs.run()
            return tuple(runs[f"perturbed_{p}"] for p in precision)
        return outputs

    want_fwd = batch["ref_forward"]
    want_fb = batch["ref_fb"] if training else {}
    if isinstance(want_fb, str) or isinstance(want_fwd, str):
        result.find("reference", "f32_sgd", want_fb if isinstance(want_fb, str) else want_fwd)
        return
    if differences:
        grads = want_fb if narrow == "f32" else batch["promoted_fb"]
        if isinstance(grads, str):
            result.find("reference", "f32_sgd", grads)
        else:
            differences.check(grads, batch, result)
    for mode, function, tag, want in (("inference", "forward", "inf", want_fwd),
                                      ("f32_sgd", "forward_backward", "sgd", want_fb)):
        if mode in compiled:
            compare_outputs(result, "transform", mode, batch[f"{tag}_f64"], want, types.get(f"{tag}_f64", {}))
            precision_check(result, mode, batch[f"{tag}_f32"], want, types.get(f"{tag}_f64", {}), narrow,
                            discontinuous, perturbed(function))
    if refs.get("bf16"):
        for want, got in (("ref_bf16_fb", "bf16_f64"), ("ref_bf16_step", "bf16_step")):
            compare_outputs(result, "transform", "bf16_adamw", batch[got], batch[want], types.get(got, {}))
        if not discontinuous:
            precision_check(result, "bf16_adamw", batch["bf16_f32"], want_fb, types.get("bf16_f32", {}), "bf16",
                            discontinuous, perturbed("forward_backward"))


def off_the_grid(graph, values, rng):
    """The arguments with each bf16 or f16 value moved toward 0 by up to
    2^-9 of itself, in f32: those types take so few values that a max or
    a max pool often sees ties, kinks where a central difference and the
    one-sided gradient differ (graph 1796629020:66). The promoted graph's
    gradients are checked at these generic points."""
    moved = dict(values)
    for a in graph.args:
        if a.value.dtype in ("bf16", "f16"):
            v = np.asarray(values[a.value.name], np.float64)
            moved[a.value.name] = tensors.round_to(v * (1 - 2.0 ** -9 * rng.uniform(0, 1, v.shape)), "f32")
    return moved


def zeros(name, shape):
    """An entry's argument the graph does not have (optimizer state, lr,
    step): zeros."""
    return np.zeros(shape)


def has_jumps(graph):
    """Whether an op of the graph jumps (floor, a comparison, a cast to an
    integer...)."""
    return any(op.name in DISCONTINUOUS or (op.name == "kiln.cast" and not op.results[0].is_float())
               for op in graph.ops)


def narrowest_type(graph):
    """bf16, f16 or f32: the coarsest floating-point type the graph rounds to."""
    types = {v.dtype for op in graph.ops for v in op.results} | {a.value.dtype for a in graph.args}
    return "bf16" if "bf16" in types else "f16" if "f16" in types else "f32"


def precision_check(result, mode, got, want, types, narrow, discontinuous, perturbed):
    """The GPU's rounding against f64, unless bf16 or f16 rounding may move
    values across the jump of a floor, sign or comparison. An output that
    misses the tolerance passes when the graph is that sensitive:
    `perturbed(eps)`, the f64 outputs at inputs each moved by a relative
    eps (the type's rounding), move at least a tenth as much, or the
    unfused entries' own rounding (rounding_spread) puts them at least a
    tenth as far from f64; an integer output (an argmax, a comparison)
    passes when such moves or the unfused entries' own rounding change it."""
    if discontinuous and narrow != "f32":
        return
    first = Result()
    compare_outputs(first, "precision", mode, got, want, types, PRECISION_RTOL[narrow])
    result.checks += first.checks
    if not first.findings:
        return
    rounded = perturbed(0.0, "f32")
    moved_rounded, moved = perturbed(2 * ULP[narrow], ("f32", "f64"))
    error = next((r for r in (rounded, moved_rounded, moved) if isinstance(r, str)), None)
    if error:
        result.find("precision", mode, error)
        return
    spread = rounding_spread(((rounded, want), (moved_rounded, moved)))
    on_jumps = set()
    if discontinuous:
        on_jumps = (outputs_on_jumps(want, moved, perturbed, 2 * ULP[narrow]) |
                    integers_moved_by_rounding(((rounded, want), (moved_rounded, moved))))
    rtol = {}
    for name in want:
        w = np.nan_to_num(np.asarray(want[name], np.float64))
        m = np.nan_to_num(np.asarray(moved.get(name, w), np.float64))
        scale = max(np.linalg.norm(w), 1e-30)
        rtol[name] = max(PRECISION_RTOL[narrow], 10 * np.linalg.norm(m - w) / scale,
                         10 * spread.get(name, 0.0) / scale)
    # bf16 and f16 rounding inside an ill-conditioned op (a norm over nearly
    # equal values) costs more than rounding the inputs shows: there a
    # miss is reported for a look, not as a finding.
    second = Result()
    compare_outputs(second, "precision", mode, got, {n: w for n, w in want.items() if n not in on_jumps},
                    types, rtol)
    (result.findings if narrow == "f32" else result.advisories).extend(second.findings)


def rounding_spread(pairs):
    """{output: the largest distance of the reference's outputs with every
    op's result stored in its type from its f64 outputs}, over the
    (rounded, f64) `pairs` of one set of arguments each. It is what the
    graph's own rounding costs, with no fusion: where that is large, the
    graph is ill-conditioned in its types, and the kernels cannot do
    better. A loss that cancels to 0 (the sum of a layer norm's outputs,
    graph 1796630925:47: f64 leaves 1e-14, f32 2e-6) and the sign of a
    value that is 0 in exact arithmetic (a batch norm backward of a
    constant channel, graph 1796630925:4554: f64's rounding noise has signs
    that add to 60, f32's none) are such cases; perturbing the arguments
    shows neither, since the value does not move with them."""
    spread = {}
    for rounded, exact in pairs:
        for name in set(rounded) & set(exact):
            if np.asarray(exact[name]).dtype.kind != "f":
                continue
            r = np.nan_to_num(np.asarray(rounded[name], np.float64))
            e = np.nan_to_num(np.asarray(exact[name], np.float64))
            if r.shape == e.shape:
                spread[name] = max(spread.get(name, 0.0), float(np.linalg.norm(r - e)))
    return spread


def integers_moved_by_rounding(pairs):
    """The integer outputs that the unfused entries' own rounding changes,
    over the (rounded, f64) `pairs` of one set of arguments each: an argmax
    of values that differ in f64 by less than their type's rounding (an
    RMS norm over a dimension of one saturates at its weight, graph
    1796642084:16709), whose winner moving the inputs does not change."""
    changed = set()
    for rounded, exact in pairs:
        changed |= {n for n in set(rounded) & set(exact)
                    if np.asarray(exact[n]).dtype.kind != "f"
                    and not np.array_equal(np.asarray(rounded[n]), np.asarray(exact[n]))}
    return changed


def outputs_on_jumps(want, moved, perturbed, eps, moves=3):
    """The integer outputs that moving the inputs by their rounding changes
    (in `moved` or up to moves - 1 more random moves): an argmax of values
    tied up to rounding (the row means of a layer norm, all 0), whose
    winner the GPU's rounding picks as arbitrarily."""
    integers = {n for n in want if np.asarray(want[n]).dtype.kind != "f"}
    changed = set()
    for attempt in range(moves):
        if attempt:
            moved = perturbed(eps)
        if isinstance(moved, str):
            break
        changed |= {n for n in integers - changed
                    if n in moved and not np.array_equal(np.asarray(moved[n]), np.asarray(want[n]))}
        if changed == integers:
            break
    return changed


# --- autodiff against a central difference -------------------------------------

NARROW_TYPE = re.compile(r"(tensor<(?:\d+x)*)(?:bf16|f16)>")


def promoted(text):
    """The graph with every bf16 and f16 type made f32: the same function
    without the rounding (and rounded constants) of narrow types, whose
    gradients a central difference in f64 checks exactly."""
    return NARROW_TYPE.sub(r"\1f32>", text)


def promoted_reference(graph, tools, work, result):
    """The reference entries of the promoted graph, or None."""
    path = os.path.join(work, "promoted.mlir")
    with open(path, "w") as f:
        f.write(promoted(graph.text()))
    return reference(tools, path, ["--kiln-make-train-step=function=loss optimizer=sgd"],
                     os.path.join(work, "ref_promoted.mlir"), result, "f32_sgd")


class CentralDifferences:
    """(L(p + d) - L(p - d)) / 2 against sum(grad . d) for a random d of
    about 1e-6 per element, in f64 (on the graph with every type f32); a
    mismatch counts when a second direction confirms it (a first one may
    cross a jump of floor or sign), unless the loss jumps at the inputs
    themselves (a bf16 parameter drawn onto a ceil's integer: then every
    direction crosses the jump, and the difference does not shrink with
    the direction), or a kink lies within the directions' reach (then the
    first direction a thousand times shorter agrees with the gradients).
    The first direction is evaluated with the graph's other runs (queue),
    the others only when needed."""

    def __init__(self, graph, tools, work, values, rng):
        self.graph, self.tools, self.work, self.values, self.rng = graph, tools, work, values, rng
        self.params = [a for a in graph.args if a.kind == "param"]
        self.path = os.path.join(work, "fd.mlir")
        self.first = None

    def probe(self):
        """@fd's inputs for a fresh random direction, and that direction by
        parameter."""
        inputs = {a.value.name: ("f32", self.values[a.value.name]) if a.value.is_float()
                  else (a.value.dtype, self.values[a.value.name]) for a in self.graph.args}
        directions = {}
        for a in self.params:
            d = tensors.round_to(self.rng.standard_normal(a.value.shape) * 1e-6, "f32")
            inputs["d_" + a.value.name] = ("f32", d)
            directions["grad." + a.value.name] = d
        return inputs, directions

    def queue(self, batch):
        if not self.params:
            return
        with open(self.path, "w") as f:
            f.write(promoted(fd_module(self.graph)))
        self.first_inputs, self.first = self.probe()
        batch.add("fd0", self.path, "fd", self.first_inputs, "f64")

    def check(self, grads, batch, result):
        if not self.params:
            return
        failures, centrals = [], []
        for attempt in range(2):
            if attempt == 0:
                directions, out = self.first, batch["fd0"]
            else:
                inputs, directions = self.probe()
                out = evaluate(self.tools, self.path, "fd", inputs, "f64", self.work, "fd1")
            if isinstance(out, str):
                result.find("autodiff", "f64", out)
                return
            predicted, scale = prediction(grads, directions)
            central = float(out["diff"]) / 2
            centrals.append(central)
            result.checks += 1
            if not math.isfinite(central) or not math.isfinite(float(grads["loss"])):
                return  # (a NaN loss, as cross entropy's with every row ignored)
            if self.agree(central, predicted, scale, grads):
                return
            failures.append(f"central difference {central:.9g}, gradients predict {predicted:.9g}"
                            f" (sum |g d| {scale:.3g})")
        short = self.shorter(grads, result)
        if short is None:
            return
        central, predicted, scale = short
        if has_jumps(self.graph) and abs(central) > 0.5 * abs(centrals[0]):
            return  # a jump at the inputs: no gradient exists there
        if self.agree(central, predicted, scale, grads, length=1e-3):
            return  # a kink within the first direction's reach (see shorter)
        result.find("autodiff", "f64", "; ".join(failures))

    @staticmethod
    def agree(central, predicted, scale, grads, length=1.0):
        """Within the check's tolerances; `length`: the direction's, relative
        to the first's (the absolute tolerance, f64's rounding of the loss,
        shrinks with it, so that a shorter probe excuses no more)."""
        atol = 1e-12 * length * max(1.0, abs(float(grads["loss"])))
        return abs(central - predicted) <= 1e-5 * scale + 1e-4 * abs(central) + atol

    def shorter(self, grads, result):
        """The first direction made a thousand times shorter: (central
        difference, the gradients' prediction, sum |g d|), or None where
        kiln-ref failed (then a finding). Where the loss jumps at the inputs,
        the shorter direction still moves it by about as much (a smooth loss
        moves a thousand times less). Where a kink (a min, max, abs or relu
        at a tie) lies within the first direction's reach but not at the
        inputs themselves (graph 1796624847:4260: two values of a min 3e-8
        apart, probes of 1e-6), both probes straddle it, and the shorter one
        agrees with the gradients, as it would not with a wrong gradient: at
        1e-6 a smooth loss's central difference has no error to speak of."""
        inputs, directions = dict(self.first_inputs), {}
        for name in self.first:
            key = "d_" + name[len("grad."):]
            inputs[key] = ("f32", tensors.round_to(inputs[key][1] * 1e-3, "f32"))
            directions[name] = inputs[key][1]
        out = evaluate(self.tools, self.path, "fd", inputs, "f64", self.work, "fd_short")
        if isinstance(out, str):
            result.find("autodiff", "f64", out)
            return None
        return (float(out["diff"]) / 2, *prediction(grads, directions))


def prediction(grads, directions):
    """(sum(grad . d), sum |grad . d|) over the parameters' directions."""
    predicted, scale = 0.0, 0.0
    for name, d in directions.items():
        gd = np.asarray(grads[name], np.float64) * d
        predicted += float(np.sum(gd))
        scale += float(np.sum(np.abs(gd)))
    return predicted, scale


def fd_module(graph):
    """@fd(arguments..., d_PARAM...) -> loss(p + d) - loss(p - d)."""
    params = [a for a in graph.args if a.kind == "param"]
    # (A state argument may feed one batch norm only: here it is an input.)
    head = [f'%{a.value.name}: {a.value.type} {{kiln.name = "{a.value.name}"}}' for a in graph.args]
    head += [f'%d_{a.value.name}: {a.value.type} {{kiln.name = "d_{a.value.name}"}}' for a in params]
    lines = ["func.func @fd(" + ", ".join(head) + ') -> (tensor<f32> {kiln.name = "diff"}) {']
    losses = []
    for copy, op_name in (("a", "kiln.add"), ("b", "kiln.sub")):
        rename = {a.value.name: a.value.name for a in graph.args}
        for a in params:
            name = f"{copy}_{a.value.name}"
            lines.append(f"  %{name} = {op_name} %{a.value.name}, %d_{a.value.name} : {a.value.type}, {a.value.type}")
            rename[a.value.name] = name
        for op in graph.ops:
            for v in op.results:
                rename[v.name] = f"{copy}_{v.name}"
            rhs = op.fmt.format(*("%" + rename[v.name] for v in op.operands))
            lhs = ", ".join("%" + rename[v.name] for v in op.results)
            lines.append(f"  {lhs} = {rhs}")
        losses.append("%" + rename[graph.loss.name])
    lines.append(f"  %diff = kiln.sub {losses[0]}, {losses[1]} : tensor<f32>, tensor<f32>")
    lines.append("  return %diff : tensor<f32>")
    lines.append("}")
    return "\n".join(lines) + "\n"
