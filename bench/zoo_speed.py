#!/usr/bin/env python3
"""The model zoo's bf16 training step, kiln against PyTorch.

    zoo_speed.py bundle --kilnc KILNC --kiln-run KILN_RUN --out DIR [--only A,B]
    zoo_speed.py run OUT [--only A,B] [--variants kiln,eager,compile]
        [--budget 500] [--dry-run [--size ci|bench]]

bundle (here): per workload (WORKLOADS: models of tests/zoo/models.py at
their "bench" size), the model and its loss are exported to ONNX as
tests/zoo/zoo.py exports them (opset 17, training mode) and compiled with
`kilnc --train=adamw --precision=bf16 --fresh-params`; DIR gets the
artifacts, kiln-run, this script, bench/bench_harness.py, models.py, COMMIT,
workloads.json (kilnc's time, the artifact's size, or its diagnostic) and
MANIFEST (the same, a line a workload). The batches are not carried: run
draws them there from the seed.

run (there, from inside the bundle): per workload, the batch from the seed
(torch), written for kiln-run; kiln's train_step timed by `kiln-run --bench`
(CUDA-graph replays, median; parameters drawn by kiln-run's initialisers);
PyTorch's full step (forward and loss under bf16 autocast, backward, fused
AdamW, zero_grad(set_to_none=True)) eager and under torch.compile, timed by
CUDA events around each step after a warm-up, median. Every measurement runs
in a process of its own under a timeout cut to what is left of --budget
seconds (kiln and eager of every workload first, then torch.compile, whose
compile is timed apart); one that fails is a row's note. OUT gets
zoo_speed.md (the table) and zoo_speed.log.

A twin (TWINS: resnet50_nhwc, unet_nhwc) is its model's workload compiled
with more kilnc flags (--layout=channels-last): only kiln runs for it, and
its row takes its PyTorch cells and ratios from its model's row.

--dry-run: PyTorch on the CPU at --size (default ci) with CPU timers, no
torch.compile, and kiln-run --dry-run (the inputs checked against the
artifact, which needs --size bench) where an artifact is present.
"""
import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# In the repository the zoo lives beside bench/; in the bundle everything is
# in one folder.
sys.path[:0] = [HERE, os.path.join(HERE, "..", "tests", "zoo")]

import bench_harness as harness  # noqa: E402  (timing, safetensors)

# workload: (model of models.py, its size, what that is).
WORKLOADS = {
    "resnet50": ("resnet50", "bench", "224x224, batch 64, 10 classes"),
    "vit": ("vit", "bench", "ViT-S/16, 224x224, batch 64, 10 classes"),
    "gpt": ("gpt", "bench", "12 layers, width 768, 12 heads, vocab 32768, T 1024, batch 8"),
    "unet": ("unet", "bench", "width 64 (64-128), 64x64, batch 32"),
    "resnet50_nhwc": ("resnet50", "bench", "224x224, batch 64, 10 classes"),
    "unet_nhwc": ("unet", "bench", "width 64 (64-128), 64x64, batch 32")}
# Twins: the same model and batch compiled with more kilnc flags. Only kiln
# runs for a twin; its PyTorch cells are its model's workload's.
TWINS = {"resnet50_nhwc": ("resnet50", ["--layout=channels-last"]),
         "unet_nhwc": ("unet", ["--layout=channels-last"])}
CHANNELS_LAST = {"resnet50", "unet"}  # convolutional: PyTorch's fast layout
VARIANTS = ["kiln", "eager", "compile"]
SEED = 1
RESULT = "RESULT "


# --- bundle (here) ------------------------------------------------------------

def export_workload(args, name):
    """Exports NAME at the bench size as zoo.py does; returns its
    workloads.json entry and kilnc's --trainable."""
    import warnings
    import torch
    import models
    import zoo
    warnings.filterwarnings("ignore")  # the exporter's notes on every batch norm
    model, size, _ = WORKLOADS[name]
    torch.manual_seed(0)
    case = models.ZOO[model](size)
    start = time.monotonic()
    onnx = os.path.join(args.work, name + ".train.onnx")
    if args.keep_exports and os.path.exists(onnx):
        train = models.WithLoss(case.model, case.loss)
        names = list(case.inputs) + ["target"]
    else:
        with torch.no_grad():  # the same graph, without the autograd tape's gigabytes
            train, names, _ = zoo.export_training(case, onnx)
    entry = {"size": WORKLOADS[name][2], "inputs": names,
             "export_s": round(time.monotonic() - start, 1),
             "parameters": sum(p.numel() for p in train.parameters())}
    return entry, ",".join(n for n, _ in train.named_parameters())


def compile_workload(args, name, entry, trainable):
    """kilnc's bf16 AdamW step of NAME into OUT/NAME.kiln; adds its time and
    size, or its diagnostic, to `entry`."""
    import zoo
    artifact = os.path.join(args.out, name + ".kiln")
    cmd = [args.kilnc, os.path.join(args.work, name + ".train.onnx"),
           f"--trainable={trainable}", "--train=adamw", "--precision=bf16",
           *TWINS.get(name, (None, []))[1], "--fresh-params", "-o", artifact,
           f"--kernel-cache={os.path.join(args.work, 'kernels')}"]
    start = time.monotonic()
    status, _, error = zoo.run_tool(cmd, args.work)
    entry["kilnc_s"] = round(time.monotonic() - start, 1)
    if status:
        entry["error"] = error
    else:
        entry["artifact_bytes"] = os.path.getsize(artifact)
    print(manifest_line(name, entry), flush=True)
    return entry


def manifest_line(name, entry):
    what = (f"fail: {entry['error']}" if "error" in entry else
            f"pass: {entry['artifact_bytes'] / 2**20:.1f} MiB")
    note = f"; {entry['note']}" if entry.get("note") else ""
    return f"{name} bf16_adamw {what} [kilnc {entry['kilnc_s']:.0f} s; {entry['size']}{note}]"


def bundle(args):
    """Exports the workloads one at a time (the exporter is not
    thread-safe), each compiled as soon as it is exported, --jobs at once."""
    import concurrent.futures
    os.makedirs(args.out, exist_ok=True)
    args.work = os.path.abspath(args.work or os.path.join(args.out, "work"))
    os.makedirs(args.work, exist_ok=True)
    path = os.path.join(args.out, "workloads.json")
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        jobs = {}
        for name in selected(args.only):
            print(f"{name}: exporting ({WORKLOADS[name][2]})", flush=True)
            entry, trainable = export_workload(args, name)
            print(f"{name}: exported in {entry['export_s']:.0f} s"
                  + (" (or kept)" if args.keep_exports else ""), flush=True)
            jobs[name] = pool.submit(compile_workload, args, name, entry, trainable)
        compiled = {n: job.result() for n, job in jobs.items()}
    entries = read_json(path)  # another run's workloads (--only) stay
    entries.update(compiled)
    with open(path, "w") as f:
        json.dump(entries, f, indent=1)
    with open(os.path.join(args.out, "MANIFEST"), "w") as f:
        f.write("".join(manifest_line(n, e) + "\n" for n, e in entries.items()))
    return 0


# --- one measurement (a process of its own) -------------------------------------

def make_case(name, size):
    """The model and batch of workload NAME at its bench size (or the ci
    size of its model), the same for kiln and PyTorch."""
    import torch
    import models
    model, bench_size, _ = WORKLOADS[name]
    torch.manual_seed(SEED)
    return models.ZOO[model](bench_size if size == "bench" else size)


def write_kiln_inputs(case, path):
    """The batch as kiln-run reads it: floats f32, integers i32."""
    import torch
    tensors = dict(case.inputs, target=case.target)
    harness.write_safetensors(path, {
        n: harness.safetensors_entry(t.float() if t.is_floating_point() else t.int())
        for n, t in tensors.items()})


def measure_kiln(args, case):
    artifact = os.path.join(HERE, args.workload + ".kiln")
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, args.workload + ".inputs.safetensors")
        write_kiln_inputs(case, inputs)
        if args.dry_run:  # the command time_kiln runs, checked without a GPU
            proc = subprocess.run([os.path.join(HERE, "kiln-run"), artifact, "--entry",
                                   "train_step", "--inputs", inputs, "--bench", "--warmup",
                                   str(args.warmup), "--iters", str(args.iters),
                                   "--seed", str(SEED), "--dry-run"],
                                  capture_output=True, text=True)
            print((proc.stdout + proc.stderr).rstrip(), flush=True)
            if proc.returncode:
                return {"error": f"kiln-run --dry-run exit {proc.returncode}"}
            return {"note": "dry run: inputs checked, not timed"}
        ms, note = harness.time_kiln(artifact, "train_step", inputs, None, args.warmup,
                                       args.iters, ["--seed", str(SEED)])
    if ms is None:
        return {"error": note}
    peak = re.search(r"peak device memory (\d+) MiB", note)
    return {"ms": ms, "peak_mib": int(peak.group(1)) if peak else None}


def torch_step(case, name, device, compiled):
    """One full training step of NAME as a callable (bf16 autocast)."""
    import torch
    import models
    model = models.WithLoss(case.model, case.loss).to(device).train()
    batch = [t.to(device) for t in list(case.inputs.values()) + [case.target]]
    if name in CHANNELS_LAST:
        model = model.to(memory_format=torch.channels_last)
        batch[0] = batch[0].contiguous(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01,
                            **({"fused": True} if device == "cuda" else {}))
    forward = torch.compile(model) if compiled else model

    def step():
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = forward(*batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return step


def time_cpu(fn, warmup, iters):
    """Median ms of `iters` calls after `warmup`, by the wall clock."""
    import statistics
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def measure_torch(args, case):
    import torch
    device = "cpu" if args.dry_run else "cuda"
    if device == "cuda":
        torch.backends.cudnn.benchmark = True
    step = torch_step(case, args.workload, device, args.variant == "compile")
    start = time.monotonic()
    loss = float(step())  # torch.compile compiles here
    first_s = time.monotonic() - start
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        ms = harness.time_events(step, args.warmup, args.iters)
        peak = torch.cuda.max_memory_allocated() / 2**20
    else:
        ms, peak = time_cpu(step, args.warmup, args.iters), None
    return {"ms": ms, "peak_mib": peak, "first_step_s": round(first_s, 1),
            "first_loss": loss}


def measure(args):
    """Prints RESULT {json}: ms, peak_mib and notes, or error."""
    artifact = os.path.join(HERE, args.workload + ".kiln")
    try:
        if args.variant == "kiln" and not os.path.exists(artifact):
            result = {"error": "no artifact (kilnc failed: see MANIFEST)"}
        else:
            case = make_case(args.workload, args.size)
            result = (measure_kiln if args.variant == "kiln" else measure_torch)(args, case)
    except Exception as e:  # reported as the row's note
        import traceback
        traceback.print_exc()
        result = {"error": harness.short_error(e)}
    print(RESULT + json.dumps(result), flush=True)
    return 0


# --- run (there) ----------------------------------------------------------------

def selected(only):
    names = only.split(",") if only else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        sys.exit(f"unknown workload {unknown[0]}: one of {', '.join(WORKLOADS)}")
    return names


def spawn(args, name, variant, timeout, log):
    """Runs `measure` in a process group of its own (kiln-run included),
    killed after `timeout` seconds; its result, or an error."""
    cmd = [sys.executable, os.path.abspath(__file__), "measure", name, variant,
           "--size", args.size, "--warmup", str(args.warmup), "--iters", str(args.iters)]
    if args.dry_run:
        cmd.append("--dry-run")
    say(log, f"$ {' '.join(cmd)}  (timeout {timeout:.0f} s)")
    proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        log.write(out)
        return {"error": f"timed out after {timeout:.0f} s"}
    log.write(out)
    found = [line for line in out.splitlines() if line.startswith(RESULT)]
    if not found:
        tail = " ".join(out.strip().splitlines()[-1:])[:160]
        return {"error": f"exit {proc.returncode}: {tail}"}
    return json.loads(found[-1][len(RESULT):])


def say(log, text):
    print(text, flush=True)
    log.write(text + "\n")
    log.flush()


def plan(names, variants, workloads):
    """kiln and eager of every workload first: torch.compile takes the
    longest, and what is left of the budget, first where kiln compiled."""
    first = [(n, v) for n in names for v in variants
             if v == "kiln" or (v == "eager" and n not in TWINS)]
    compiled = sorted((n for n in names if n not in TWINS),
                      key=lambda n: "error" in workloads.get(n, {"error": 1}))
    return first + [(n, "compile") for n in compiled if "compile" in variants]


def run(args):
    os.makedirs(args.out, exist_ok=True)
    workloads = read_json(os.path.join(HERE, "workloads.json"))
    names, variants = selected(args.only), args.variants.split(",")
    deadline = time.monotonic() + args.budget
    results = {}
    with open(os.path.join(args.out, "zoo_speed.log"), "w") as log:
        for name, variant in plan(names, variants, workloads):
            left = deadline - time.monotonic()
            if variant == "compile" and args.dry_run:
                results[(name, variant)] = {"error": "not run (dry run: no torch.compile)"}
            elif left < 20:
                results[(name, variant)] = {"error": "not run: the time budget is spent"}
            else:
                timeout = min(args.timeout[variant], left)
                results[(name, variant)] = spawn(args, name, variant, timeout, log)
            say(log, f"{name} {variant}: {json.dumps(results[(name, variant)])}")
        table = format_results(args, names, workloads, results)
        say(log, table)
        say(log, f"zoo_speed.py run: {args.budget - (deadline - time.monotonic()):.0f} s")
    with open(os.path.join(args.out, "zoo_speed.md"), "w") as f:
        f.write(table)
    return 0


def read_json(path):
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


# --- the table ------------------------------------------------------------------

def cell_ms(result):
    if not result or result.get("error", "").startswith("not run"):
        return "not run"
    return harness.fmt_ms(result.get("ms"))


def cell_ratio(torch_result, kiln_result):
    if not torch_result or not kiln_result:
        return ""
    t, k = torch_result.get("ms"), kiln_result.get("ms")
    return f"{t / k:.2f}x" if t and k else ""


def cell_peak(result):
    peak = (result or {}).get("peak_mib")
    return f"{peak:.0f}" if peak is not None else ""


def compile_cells(entry):
    if not entry:
        return ["", ""]
    size = entry.get("artifact_bytes")
    return [f"{entry['kilnc_s']:.0f}", f"{size / 2**20:.1f}" if size else "failed"]


def row_notes(name, entry, results):
    notes = []
    if entry and "error" in entry:
        notes.append(f"kilnc: `{entry['error']}`")
    if entry and entry.get("note"):
        notes.append(entry["note"])
    for variant in VARIANTS:
        r = results.get((name, variant))
        if r and "error" in r:
            notes.append(f"{variant}: {r['error']}")
        elif r and r.get("note"):
            notes.append(f"{variant}: {r['note']}")
    compiled = results.get((name, "compile"))
    if compiled and "first_step_s" in compiled:
        notes.append(f"torch.compile's first step {compiled['first_step_s']:.0f} s")
    return "; ".join(notes)


def format_results(args, names, workloads, results):
    header = environment(args)
    lines = ["| workload | size | kiln ms | eager+autocast ms | compile+autocast ms "
             "| eager / kiln | compile / kiln | kiln peak MiB | eager peak MiB "
             "| compile peak MiB | kilnc s | artifact MiB | notes |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name in names:
        twin = TWINS.get(name, (name,))[0]
        r = {v: results.get((name if v == "kiln" else twin, v)) for v in VARIANTS}
        entry = workloads.get(name)
        size = (f"{entry['size']}; {entry['parameters'] / 1e6:.1f}M parameters"
                if entry and not args.dry_run else f"{args.size} size")
        if name in TWINS:
            size += f"; kilnc {' '.join(TWINS[name][1])}"
        cells = [name, size, cell_ms(r["kiln"]), cell_ms(r["eager"]), cell_ms(r["compile"]),
                 cell_ratio(r["eager"], r["kiln"]), cell_ratio(r["compile"], r["kiln"]),
                 cell_peak(r["kiln"]), cell_peak(r["eager"]), cell_peak(r["compile"]),
                 *compile_cells(entry), row_notes(name, entry, results)]
        lines.append("| " + " | ".join(cells) + " |")
    return header + "\n".join(lines) + "\n\n" + LEGEND


LEGEND = """\
Ratios: PyTorch ms / kiln ms (above 1: kiln is faster). kiln: `kiln-run
--bench --entry train_step` (CUDA-graph replays, median; bf16 parameters
with f32 master weights, AdamW; parameters from kiln-run's initialisers);
peak: the run's device-memory high-water mark. PyTorch: f32 parameters,
forward and loss under bf16 autocast, backward, AdamW(fused=True),
zero_grad(set_to_none=True), CUDA events around each step, median (ResNet
and UNet channels_last, cudnn.benchmark); torch.compile is the model's
(default mode; the optimizer eager), its first step not timed; peak:
torch.cuda.max_memory_allocated over the timed steps. kilnc: wall time of
the compile on the bundle's machine (cold kernel cache), the artifact
without weights (--fresh-params).
"""


def environment(args):
    import torch
    gpu = "CPU (dry run)"
    if not args.dry_run:
        try:
            gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                 capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            gpu = "unknown GPU"
    commit = open(os.path.join(HERE, "COMMIT")).read().strip() if os.path.exists(
        os.path.join(HERE, "COMMIT")) else "unknown"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"## The zoo's bf16 training step: kiln against PyTorch\n\n"
            f"{gpu}; torch {torch.__version__}; kiln {commit}; {date}; "
            f"median of {args.iters} steps after {args.warmup}.\n\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("bundle")
    p.add_argument("--kilnc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--work", help="exports and kernel cache (default OUT/work)")
    p.add_argument("--only", help="comma-separated workloads (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="kilnc processes at once")
    p.add_argument("--keep-exports", action="store_true",
                   help="compile the ONNX files WORK holds (an earlier export) again")
    p = sub.add_parser("run")
    p.add_argument("out", help="folder for zoo_speed.md and zoo_speed.log")
    p.add_argument("--only", help="comma-separated workloads (default: all)")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--budget", type=float, default=500, help="seconds for the whole run")
    p.add_argument("--timeout-kiln", type=float, default=90)
    p.add_argument("--timeout-eager", type=float, default=90)
    p.add_argument("--timeout-compile", type=float, default=240)
    for p in (sub.choices["run"], sub.add_parser("measure")):
        p.add_argument("--dry-run", action="store_true")
        p.add_argument("--size", choices=["ci", "bench"])
        p.add_argument("--warmup", type=int, default=10)
        p.add_argument("--iters", type=int, default=30)
    p.add_argument("workload", choices=WORKLOADS)
    p.add_argument("variant", choices=VARIANTS)
    args = parser.parse_args()
    if args.command != "bundle" and args.size is None:
        args.size = "ci" if args.dry_run else "bench"
    if args.command == "run":
        args.timeout = {"kiln": args.timeout_kiln, "eager": args.timeout_eager,
                        "compile": args.timeout_compile}
    return {"bundle": bundle, "run": run, "measure": measure}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
