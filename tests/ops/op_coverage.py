#!/usr/bin/env python3
"""The op-coverage suite: every op of the kiln dialect compiles for the GPU.

For each model in --models (one small model per op, each with a parameter on
the op's path):
  - kilnc compiles it in three modes (--inference; --train=sgd in f32;
    --train=adamw --precision=bf16) to PTX, and ptxas assembles every kernel
    of the output for the architecture the kernel names;
  - a model whose header says `// expect-error: TEXT` (an op that has no GPU
    kernel yet) must fail in every mode with an error at its own file that
    contains TEXT, never a crash or compiler-internal IR.
Then every op that registered_ops lists must occur in some model or in the
training step kiln-opt builds from one (the gradient ops autodiff
introduces), so an op added to the dialect without coverage fails the suite.

Prints one line per model and mode, and a summary; writes a JUnit file with
one case per model and mode (and one for the coverage check) if --junit is
given. Exits non-zero if anything failed.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

MODES = {
    "inference": ["--inference"],
    "f32_sgd": ["--train=sgd"],
    "bf16_adamw": ["--train=adamw", "--precision=bf16"],
}
KERNEL_HEADER = re.compile(r"^// ===== (\S+) =====$", re.M)
OP_NAME = re.compile(r"\bkiln\.([a-z0-9_]+)\b")


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def expected_error(model_text, mode):
    """TEXT of `// expect-error: TEXT` (every mode) or of
    `// expect-error[mode,...]: TEXT` naming `mode`, else None."""
    for match in re.finditer(r"^// expect-error(?:\[([a-z0-9_,]+)\])?: (.+)$",
                             model_text, re.M):
        if match.group(1) is None or mode in match.group(1).split(","):
            return match.group(2).strip()
    return None


def assemble(ptx_text, work, stem, ptxas):
    """Assembles each kernel of a --emit=ptx output; returns failures."""
    failures = []
    headers = list(KERNEL_HEADER.finditer(ptx_text))
    if not headers:
        return ["the PTX output has no kernels"]
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(ptx_text)
        body = ptx_text[header.end():end]
        target = re.search(r"^\.target\s+(\S+)", body, re.M)
        if not target:
            failures.append(f"{header.group(1)}: no .target")
            continue
        path = os.path.join(work, f"{stem}.{header.group(1)}.ptx")
        with open(path, "w") as f:
            f.write(body)
        # (bazel's sandbox may not let ptxas open /dev/null for writing.)
        result = run([ptxas, f"-arch={target.group(1)}", path, "-o", path + ".cubin"])
        if result.returncode != 0:
            failures.append(f"{header.group(1)}: ptxas: {result.stderr.strip()[:400]}")
    return failures


def check_mode(args, model, mode, flags):
    """Returns (kernels assembled, failure message or None)."""
    name = os.path.basename(model)[:-len(".mlir")]
    with open(model) as f:
        expect = expected_error(f.read(), mode)
    stem = f"{name}.{mode}"
    out = os.path.join(args.work, stem + ".ptx")
    cmd = [args.kilnc, model, *flags, "--emit=ptx", "-o", out,
           f"--kernel-cache={os.path.join(args.work, 'kernel-cache')}"]
    result = run(cmd)
    stderr = result.stderr.strip()
    if expect is not None:
        if result.returncode != 1:
            return 0, f"expected a clean error (exit 1), got exit {result.returncode}: {stderr[:400]}"
        located = re.search(rf"{re.escape(os.path.basename(model))}:\d+:\d+: error: ", stderr)
        if not located or expect not in stderr:
            return 0, f"expected an error at the model containing '{expect}', got: {stderr[:400]}"
        if "UNKNOWN SSA VALUE" in stderr or "kiln.fusion" in stderr:
            return 0, f"the error shows compiler-internal IR: {stderr[:400]}"
        return 0, None
    if result.returncode != 0:
        return 0, f"kilnc {' '.join(flags)} failed: {stderr[:600]}"
    with open(out) as f:
        ptx = f.read()
    failures = assemble(ptx, args.work, stem, args.ptxas)
    if failures:
        return 0, "; ".join(failures)
    return len(KERNEL_HEADER.findall(ptx)), None


def ops_of(args, model):
    """The ops of a model and of the training step kiln-opt builds from it."""
    with open(model) as f:
        ops = set(OP_NAME.findall(re.sub(r"^//.*$", "", f.read(), flags=re.M)))
    result = run([args.kiln_opt, model,
                  "--kiln-make-train-step=function=loss optimizer=sgd",
                  "--kiln-fuse"])
    if result.returncode == 0:
        ops |= set(OP_NAME.findall(result.stdout))
    return {"kiln." + op for op in ops}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kilnc", required=True)
    parser.add_argument("--kiln-opt", required=True)
    parser.add_argument("--registered-ops", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--ptxas", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--junit")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    models = sorted(os.path.join(args.models, m) for m in os.listdir(args.models)
                    if m.endswith(".mlir"))
    cases = []  # (name, failure or None, detail)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {(m, mode): pool.submit(check_mode, args, m, mode, flags)
                for m in models for mode, flags in MODES.items()}
        coverage = {m: pool.submit(ops_of, args, m) for m in models}
        for (model, mode), job in jobs.items():
            kernels, failure = job.result()
            name = f"{os.path.basename(model)[:-5]}:{mode}"
            status = "FAIL" if failure else "PASS"
            detail = failure or (f"{kernels} kernels assembled" if kernels else
                                 "no GPU kernel yet, reported at the model")
            print(f"{status} {name}: {detail}", flush=True)
            cases.append((name, failure, detail))
        covered = set().union(*(job.result() for job in coverage.values()))

    registered = run([args.registered_ops], check=True).stdout.split()
    missing = sorted(op for op in registered if op not in covered)
    failure = f"ops without a model: {', '.join(missing)}" if missing else None
    detail = failure or f"all {len(registered)} registered ops covered by {len(models)} models"
    print(f"{'FAIL' if failure else 'PASS'} coverage: {detail}")
    cases.append(("coverage", failure, detail))

    failed = sum(1 for _, f, _ in cases if f)
    print(f"{len(cases) - failed} passed, {failed} failed")
    if args.junit:
        suite = ElementTree.Element("testsuite", name="op_coverage",
                                    tests=str(len(cases)), failures=str(failed))
        for name, fail, detail in cases:
            case = ElementTree.SubElement(suite, "testcase", name=name,
                                          classname="op_coverage", status="run")
            if fail:
                ElementTree.SubElement(case, "failure", message=fail[:200]).text = fail
        root = ElementTree.Element("testsuites")
        root.append(suite)
        ElementTree.ElementTree(root).write(args.junit, encoding="utf-8", xml_declaration=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
