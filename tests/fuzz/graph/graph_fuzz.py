#!/usr/bin/env python3
"""The graph-level differential fuzzer of kiln.

    graph_fuzz.py run --bin DIR --seed S --count N [--first I] [--jobs J]
        [--work DIR] [--nvrtc-every K] [--only OP,...] [--junit FILE] [--quiet]
    graph_fuzz.py show --seed S --index I [--only OP,...]
    graph_fuzz.py reduce --bin DIR --seed S --index I --out FILE.mlir
        [--check CHECK] [--mode MODE] [--work DIR] [--only OP,...]
    graph_fuzz.py ops --registered-ops BIN [--seed S --count N]
    graph_fuzz.py bundle --bin DIR --seed S --count N --out DIR [--first I]

run: generates graphs S:I..S:I+N-1 (graph S:I is the same on every machine)
and checks each (check.py): compiles in three modes, the compiled entries
against the unfused reference in f64, autodiff against central differences,
and the GPU's rounding against f64. Every --nvrtc-every'th graph is compiled
to an artifact (NVRTC) instead of CUDA C++ only. Prints a line per graph with
a finding and a summary; a graph with a finding is left in
WORK/failures/S_I.mlir. Exits 1 if anything was found.
show: prints graph S:I.
reduce: cuts graph S:I down (reduce.py) while the first finding (or the
one of --check/--mode) reproduces, and writes what is left.
bundle: the GPU check of graphs S:I.. (bundle.py; make_gpu_bundle.sh).
ops: fails when an op the registry lists is neither generated nor excluded
with a reason (gen.EXCLUDED), or a generated op is not registered; with
--count, also when a generated op occurs in none of the N graphs.
BIN holds kilnc, kiln-opt and kiln-ref.
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check  # noqa: E402
import gen  # noqa: E402


def only_ops(args):
    """The ops of --only (graphs S:I of `run --only` are other graphs)."""
    return args.only.split(",") if args.only else None


def make_graph(seed, index, only=None):
    label = f"{seed}:{index}"
    return gen.generate(label, random.Random(label), only=only)


def input_seed(seed, index):
    return zlib.crc32(f"inputs {seed}:{index}".encode())


def tools_of(args, nvrtc=False):
    b = args.bin
    return check.Tools(os.path.join(b, "kilnc"), os.path.join(b, "kiln-opt"), os.path.join(b, "kiln-ref"),
                       nvrtc=nvrtc, kernel_cache=os.path.join(args.work, "kernel-cache"))


def one(args, index):
    graph = make_graph(args.seed, index, only_ops(args))
    work = os.path.join(args.work, "graphs", f"{args.seed}_{index}")
    nvrtc = bool(args.nvrtc_every) and index % args.nvrtc_every == 0
    try:
        result = check.check(graph, tools_of(args, nvrtc), work, input_seed(args.seed, index))
    except Exception as e:  # A bug of the fuzzer's own is a finding too.
        result = check.Result()
        result.find("fuzzer", "-", f"{type(e).__name__}: {e}")
    if result.findings:
        os.makedirs(os.path.join(args.work, "failures"), exist_ok=True)
        shutil.copy(os.path.join(work, "graph.mlir"),
                    os.path.join(args.work, "failures", f"{args.seed}_{index}.mlir"))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return graph, result


def refusal_kind(outcome):
    """A refusal's message with its numbers and names left out."""
    text = outcome[len("refused: "):]
    return re.sub(r"\d+", "N", re.sub(r"'[^']*'", "'...'", text))[:160]


def run_command(args):
    os.makedirs(args.work, exist_ok=True)
    start = time.monotonic()
    counts = collections.Counter()
    refusals = collections.Counter()
    known = collections.Counter()
    op_counts = collections.Counter()
    findings = []
    advisories = 0
    cases = []
    indices = range(args.first, args.first + args.count)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for index, (graph, result) in zip(indices, pool.map(lambda i: one(args, i), indices)):
            label = f"{args.seed}:{index}"
            counts["graphs"] += 1
            counts["ops"] += len(graph.ops)
            counts["checks"] += result.checks
            op_counts.update(graph.op_names())
            known.update({test for _, test in result.known})
            for mode, outcome in result.outcomes.items():
                counts[outcome.split(":")[0]] += 1
                if outcome.startswith("refused"):
                    refusals[f"{mode}: {refusal_kind(outcome)}"] += 1
            failure = "; ".join(f"{c} [{m}]: {d}" for c, m, d in result.findings)
            cases.append((label, failure))
            if result.advisories:
                advisories += 1
                print(f"ADVISORY graph {label}: " + "; ".join(f"{c} [{m}]: {d}" for c, m, d in result.advisories),
                      flush=True)
            if result.findings:
                findings.append((label, result.findings))
                print(f"FINDING graph {label} ({len(graph.ops)} ops): {failure}", flush=True)
            elif not args.quiet:
                print(f"ok graph {label} ({len(graph.ops)} ops, {result.seconds:.1f} s): "
                      + ", ".join(f"{m} {o[:60]}" for m, o in result.outcomes.items()), flush=True)
    seconds = time.monotonic() - start
    print(f"seed {args.seed}: {counts['graphs']} graphs ({counts['ops']} ops) in {seconds:.0f} s "
          f"({counts['graphs'] / max(seconds, 1e-9):.2f} graphs/s, {args.jobs} jobs); compiles: "
          f"{counts['compiled']} compiled, {counts['refused']} refused with a located error, "
          f"{counts['failed']} failed; {counts['checks']} comparisons; "
          f"{len(findings)} graphs with findings, {advisories} with precision advisories")
    for kind, n in refusals.most_common():
        print(f"  refused {n}x: {kind}")
    for test, n in known.most_common():
        print(f"  {n} graphs refused as the known open {test} shows")
    if args.op_counts:
        print("  ops: " + ", ".join(f"{k} {v}" for k, v in sorted(op_counts.items())))
    for label, found in findings:
        seed, index = label.split(":")
        print(f"  reproduce: graph_fuzz.py run --bin BIN --seed {seed} --first {index} --count 1; "
              f"reduce: graph_fuzz.py reduce --bin BIN --seed {seed} --index {index} --out FILE "
              f"(graph {label}: {found[0][0]} [{found[0][1]}])")
    if args.junit:
        write_junit(args.junit, f"graph_fuzz_{args.seed}", cases)
    return 1 if findings else 0


def write_junit(path, suite_name, cases):
    """Adds a test suite of `cases` to the JUnit file at path (made if
    missing)."""
    suite = ElementTree.Element("testsuite", name=suite_name, tests=str(len(cases)),
                                failures=str(sum(1 for _, f in cases if f)))
    for name, failure in cases:
        case = ElementTree.SubElement(suite, "testcase", name=name, classname="graph_fuzz", status="run")
        if failure:
            ElementTree.SubElement(case, "failure", message=failure[:200]).text = failure
    root = ElementTree.parse(path).getroot() if os.path.exists(path) else ElementTree.Element("testsuites")
    root.append(suite)
    ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def ops_command(args):
    registered = set(subprocess.run([args.registered_ops], capture_output=True, text=True,
                                    check=True).stdout.split())
    generated, excluded = set(gen.GENERATORS), set(gen.EXCLUDED)
    problems = []
    for op in sorted(registered - generated - excluded):
        problems.append(f"{op} is registered but neither generated (tests/fuzz/graph/gen_ops.py, "
                        f"gen_nn.py) nor excluded with a reason (gen_core.EXCLUDED)")
    for op in sorted((generated | excluded) - registered):
        problems.append(f"{op} is generated or excluded but not registered")
    for op in sorted(generated & excluded):
        problems.append(f"{op} is both generated and excluded")
    if args.count:
        seen = collections.Counter()
        for index in range(args.count):
            seen.update(make_graph(args.seed, index).op_names())
        for op in sorted(generated - set(seen)):
            problems.append(f"{op} occurs in none of graphs {args.seed}:0..{args.count - 1}")
    for p in problems:
        print("FAIL " + p)
    if args.junit:
        write_junit(args.junit, "graph_fuzz_ops", [("registered ops", "; ".join(problems))])
    print(f"{len(registered)} registered ops: {len(generated & registered)} generated, "
          f"{len(excluded & registered)} excluded ({', '.join(sorted(excluded))}); "
          f"{len(problems)} problems")
    return 1 if problems else 0


def show_command(args):
    sys.stdout.write(make_graph(args.seed, args.index, only_ops(args)).text())
    return 0


def reduce_command(args):
    import reduce
    graph = make_graph(args.seed, args.index, only_ops(args))
    tools = tools_of(args)
    seed = input_seed(args.seed, args.index)
    reduced, finding = reduce.reduce(graph, tools, args.work, seed, args.check, args.mode)
    if reduced is None:
        print(f"graph {args.seed}:{args.index} has no finding to reduce")
        return 1
    with open(args.out, "w") as f:
        f.write(reduced.text())
    print(f"reduced graph {args.seed}:{args.index} from {len(graph.ops)} to {len(reduced.ops)} ops, "
          f"still: {finding[0]} [{finding[1]}]: {finding[2]}; wrote {args.out}")
    return 0


def bundle_command(args):
    import bundle
    tools = tools_of(args, nvrtc=True)
    tools.kernel_cache = os.path.join(args.out, "..", os.path.basename(args.out) + ".kernel-cache")
    failures = bundle.bundle(make_graph, input_seed, tools, os.path.join(args.bin, "kiln-run"),
                             args.seed, args.first, args.count, args.out)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_p = sub.add_parser("run")
    red_p = sub.add_parser("reduce")
    for p in (run_p, red_p):
        p.add_argument("--bin", required=True, help="folder of kilnc, kiln-opt and kiln-ref")
        p.add_argument("--work", default="/tmp/kiln-graph-fuzz")
        p.add_argument("--seed", type=int, required=True)
    run_p.add_argument("--count", type=int, default=100)
    run_p.add_argument("--first", type=int, default=0)
    run_p.add_argument("--jobs", type=int, default=1)
    run_p.add_argument("--nvrtc-every", type=int, default=0)
    run_p.add_argument("--only")
    run_p.add_argument("--junit")
    run_p.add_argument("--quiet", action="store_true")
    run_p.add_argument("--keep", action="store_true", help="keep every graph's work folder")
    run_p.add_argument("--op-counts", action="store_true")
    red_p.add_argument("--index", type=int, required=True)
    red_p.add_argument("--out", required=True)
    red_p.add_argument("--check")
    red_p.add_argument("--mode")
    red_p.add_argument("--only")
    bun_p = sub.add_parser("bundle")
    bun_p.add_argument("--bin", required=True, help="folder of kilnc, kiln-opt, kiln-ref and kiln-run")
    bun_p.add_argument("--work", default="/tmp/kiln-graph-fuzz")
    bun_p.add_argument("--seed", type=int, required=True)
    bun_p.add_argument("--first", type=int, default=0)
    bun_p.add_argument("--count", type=int, required=True)
    bun_p.add_argument("--out", required=True)
    show_p = sub.add_parser("show")
    show_p.add_argument("--seed", type=int, required=True)
    show_p.add_argument("--index", type=int, required=True)
    show_p.add_argument("--only")
    ops_p = sub.add_parser("ops")
    ops_p.add_argument("--registered-ops", required=True)
    ops_p.add_argument("--seed", type=int, default=1)
    ops_p.add_argument("--count", type=int, default=0)
    ops_p.add_argument("--junit")
    args = parser.parse_args()
    return {"run": run_command, "show": show_command, "reduce": reduce_command,
            "ops": ops_command, "bundle": bundle_command}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
