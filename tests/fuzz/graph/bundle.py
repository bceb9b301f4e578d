"""The GPU check of generated graphs: artifacts with f64 reference outputs.

bundle(args) writes, for graphs S:I..S:I+N-1 and each mode that compiles,
the case layout of tests/ops/make_gpu_cases.sh (which
tests/ops/run_gpu_cases.sh runs on the GPU machine):
  S_I.MODE.kiln                 the artifact (kilnc, NVRTC)
  S_I.MODE.inputs.safetensors   fresh random arguments of the entry (as the
                                CPU check draws them), parameters included
  S_I.MODE.expected.safetensors kiln-ref's f64 outputs of the compiled
                                module's entry
  S_I.MODE.entry                forward (inference) or forward_backward
  S_I.MODE.tolerance / .bf16-tolerance  where the graph's own bf16 or f16
                                values need looser ones, and the bf16
                                mode's (BF16_TOLERANCE)
A mode whose narrow rounding may move a floor, sign or comparison across
its jump (check.has_jumps) is left out, as in the CPU check, and so is a
bf16 case whose outputs with the GPU's rounding, as kiln-ref predicts them
(--precision f32), miss the case's tolerance: there bf16 alone would fail
the GPU check. Each artifact is checked here with `kiln-run --dry-run`
against its files.
Prints a line per graph and a summary; returns the number of failures
(a graph that does not compile or whose case fails the dry run).
"""
import os

import numpy as np

import check
import modules
import tensors

ENTRY = {"inference": "forward", "f32_sgd": "forward_backward", "bf16_adamw": "forward_backward"}
# Tolerances (rtol atol) of graphs with values of their own in bf16 or f16,
# for the f32 modes (absolute atol).
NARROW_TOLERANCE = {"bf16": "5e-2 2e-2", "f16": "1e-2 5e-3"}
# The bf16 mode's: atol relative to the output's largest magnitude, for a
# gradient to the largest of all the gradients' (run_gpu_cases.sh's
# `gradients`). Rounding every backward value to bf16 (2^-9 of it) leaves a
# gradient whose terms cancel (1e-17 in f64) with an error of the size of
# its terms, not of itself; and a gradient through a derivative that bf16
# cannot resolve (a saturated tanh's 1 - y^2, with y's spacing 2^-8 next to
# 1; a min of operands that bf16 makes equal, whose gradient is then split)
# is off by much of its own, small, value. On graphs 0-239 of seed
# 1796624847 (tests/fuzz/GRAPH_RESULTS.md) the GPU's largest such error was
# 0.011 of the largest gradient.
BF16_TOLERANCE = "1e-1 5e-2 gradients"


def case(tools, kiln_run, graph, mode, values, out, stem):
    """(None, None) if the case was written and passes the dry run, else
    (kind, why): 'refused' or 'failed'."""
    path = os.path.join(out, "graphs", stem + ".mlir")
    base = os.path.join(out, f"{stem}.{mode}")
    status, _, stderr = check.run([tools.kilnc, path, *check.MODES[mode], "-o", base + ".kiln",
                                   f"--kernel-cache={tools.kernel_cache}",
                                   "--mlir-print-ir-before=kiln-emit-cuda"])
    module, diagnostics = modules.split_dump(stderr)
    if status != 0 or module is None:
        kind = "refused" if status == 1 and not check.located_at_user_op(
            path, open(path).read(), diagnostics) else "failed"
        return kind, f"kilnc exit {status}: {check.first_line(diagnostics)}"
    module_path = base + ".module.mlir"
    with open(module_path, "w") as f:
        f.write(module)
    entry = ENTRY[mode]
    sig = modules.signature(module, entry)
    inputs = check.entry_inputs(sig[0], values, lambda n, s: np.zeros(s))
    tensors.save(base + ".inputs.safetensors", inputs)
    outputs = {}
    for precision in ("f64", "f32") if mode == "bf16_adamw" else ("f64",):
        path = base + (".expected" if precision == "f64" else ".predicted") + ".safetensors"
        status, _, stderr = check.run([tools.kiln_ref, module_path, "--function", entry, "--inputs",
                                       base + ".inputs.safetensors", "--precision", precision, "-o", path])
        if status != 0:
            os.remove(module_path)
            return "failed", f"kiln-ref --precision {precision}: {check.first_line(stderr)}"
        outputs[precision] = tensors.load(path)
    os.remove(module_path)
    with open(base + ".entry", "w") as f:
        f.write(entry + "\n")
    narrow = check.narrowest_type(graph)
    if mode == "bf16_adamw":
        os.remove(base + ".predicted.safetensors")
        missed = misses(outputs["f32"], outputs["f64"], BF16_TOLERANCE)
        if missed:
            return "left out", ("kiln-ref with the GPU's rounding misses the tolerance in "
                                + ", ".join(missed))
        with open(base + ".bf16-tolerance", "w") as f:
            f.write(BF16_TOLERANCE + "\n")
    elif narrow != "f32":
        with open(base + ".tolerance", "w") as f:
            f.write(NARROW_TOLERANCE[narrow] + "\n")
    status, _, stderr = check.run([kiln_run, base + ".kiln", "--dry-run", "--entry", entry,
                                   "--inputs", base + ".inputs.safetensors",
                                   "--check", base + ".expected.safetensors"])
    if status != 0:
        return "failed", f"kiln-run --dry-run: {check.first_line(stderr)}"
    return None, None


def misses(got, want, tolerance):
    """The outputs of `want` that `got` misses under run_gpu_cases.sh's
    rule for a tolerance file's "RTOL ATOL [gradients]" with kiln-run
    --scaled-atol: |got - want| <= atol * scale + rtol * |want| element by
    element, scale the output's largest finite |want| (with `gradients`,
    a gradient's the largest of all the gradients'); NaN only for NaN."""
    rtol, atol, *shared = tolerance.split()
    rtol, atol = float(rtol), float(atol)

    def largest(v):
        finite = np.abs(v[np.isfinite(v)])
        return float(finite.max()) if finite.size else 0.0
    gradient_scale = max([largest(v) for n, v in want.items() if n.startswith("grad.")], default=0.0)
    missed = []
    for name in sorted(want):
        w, g = np.asarray(want[name], np.float64), np.asarray(got[name], np.float64)
        scale = gradient_scale if shared == ["gradients"] and name.startswith("grad.") else largest(w)
        with np.errstate(invalid="ignore"):
            fine = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= atol * scale + rtol * np.abs(w))
        if not fine.all():
            missed.append(name)
    return missed


def bundle(make_graph, input_seed, tools, kiln_run, seed, first, count, out):
    os.makedirs(os.path.join(out, "graphs"), exist_ok=True)
    written, refused, failures, mispredicted = 0, 0, 0, 0
    for index in range(first, first + count):
        graph = make_graph(seed, index)
        stem = f"{seed}_{index}"
        with open(os.path.join(out, "graphs", stem + ".mlir"), "w") as f:
            f.write(graph.text())
        values = check.draw_inputs(graph, np.random.default_rng(input_seed(seed, index)))
        discontinuous = check.has_jumps(graph)
        narrow = check.narrowest_type(graph)
        line = []
        for mode in check.MODES:
            if discontinuous and (mode == "bf16_adamw" or narrow != "f32"):
                line.append(f"{mode} left out (rounding moves a jump)")
                continue
            kind, why = case(tools, kiln_run, graph, mode, values, out, stem)
            if kind is None:
                written += 1
                line.append(f"{mode} written")
            else:
                refused += kind == "refused"
                failures += kind == "failed"
                mispredicted += kind == "left out"
                line.append(f"{mode} {kind}: {why}")
                for leftover in os.listdir(out):
                    if leftover.startswith(f"{stem}.{mode}."):
                        os.remove(os.path.join(out, leftover))
        print(f"graph {seed}:{index}: " + "; ".join(line), flush=True)
    with open(os.path.join(out, "SEED"), "w") as f:
        f.write(f"{seed}\n")
    print(f"{written} cases written and checked with kiln-run --dry-run, {refused} refused "
          f"with a located error, {mispredicted} left out (bf16 rounding misses the tolerance on "
          f"the CPU too), {failures} failed")
    return failures
