"""What every workload of run.py uses: safetensors I/O, running and timing
kiln-run, timing PyTorch, the checks' error measures, the result tables and
the Markdown file they go into, and --only's selection.

Standard library only at import time: PyTorch is imported inside the
functions that need it, so that --self-test runs without it.
"""

import ctypes
import datetime
import json
import os
import re
import statistics
import struct
import subprocess
import traceback

# The bundle (or bench/ in the checkout): kiln-run, the artifacts, inputs.
HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# safetensors (standard library only): 8-byte little-endian header length, a
# JSON header {name: {dtype, shape, data_offsets}}, then the raw data.

DTYPE_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "I32": 4, "BOOL": 1, "F64": 8}


def read_safetensors(path):
    """Returns {name: (dtype, shape, bytes)} (metadata dropped)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], list(info["shape"]), bytes(data[begin:end]))
    return out


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: (dtype, shape, bytes)}; tensors in name order."""
    header = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    offset = 0
    names = sorted(tensors)
    for name in names:
        dtype, shape, data = tensors[name]
        count = 1
        for d in shape:
            count *= d
        if count * DTYPE_SIZES[dtype] != len(data):
            raise ValueError(f"{name}: {len(data)} bytes for {dtype}{shape}")
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name in names:
            f.write(tensors[name][2])


# ---------------------------------------------------------------------------
# Results: parsing kiln-run, tables, ratios, the Markdown file.

KILN_BENCH = re.compile(
    r"^bench (\S+): median ([0-9.eE+-]+) ms, min ([0-9.eE+-]+) ms, "
    r"mean ([0-9.eE+-]+) ms over (\d+) replays"
    r"(?: \(\d+ warm-up calls; (\d+) of (\d+) launches programmatic\))?", re.M)


# kiln-run --bench's memory line: the pool's high-water mark of the run.
KILN_BENCH_MEMORY = re.compile(r"^bench memory: peak (\d+) bytes in use", re.M)


def parse_kiln_bench(text):
    """kiln-run --bench's line -> {entry, median, min, mean, replays} or None."""
    m = KILN_BENCH.search(text)
    if not m:
        return None
    return {"entry": m.group(1), "median": float(m.group(2)),
            "min": float(m.group(3)), "mean": float(m.group(4)),
            "replays": int(m.group(5)),
            "programmatic": (f"{m.group(6)} of {m.group(7)} launches programmatic"
                             if m.group(6) else None)}


class Row:
    """One line of a table: a name, a median in ms (None when it failed)."""

    def __init__(self, name, ms=None, note="", torch=True):
        self.name, self.ms, self.note, self.torch = name, ms, note, torch


def best_torch(rows):
    """The fastest torch row that ran, or None."""
    ran = [r for r in rows if r.torch and r.ms is not None]
    return min(ran, key=lambda r: r.ms) if ran else None


def ratio_line(kiln_ms, best):
    """(kiln / best torch, speedup = best torch / kiln), None where unknown."""
    if kiln_ms is None or best is None or best.ms is None or kiln_ms <= 0:
        return None, None
    return kiln_ms / best.ms, best.ms / kiln_ms


def fmt_ms(ms):
    if ms is None:
        return "failed"
    return f"{ms:.4f}" if ms < 1 else f"{ms:.3f}"


def format_table(title, rows, goal=""):
    """Markdown table: kiln, then the torch rows, then kiln / best torch."""
    kiln = next((r for r in rows if not r.torch), None)
    kiln_ms = kiln.ms if kiln else None
    best = best_torch(rows)
    lines = [f"### {title}", ""]
    if goal:
        lines += [f"Goal (TARGETS.md): {goal}", ""]
    lines += ["| variant | median ms | torch / kiln | note |",
              "|---|---:|---:|---|"]
    for r in rows:
        speed = ""
        if r.torch and r.ms is not None and kiln_ms:
            speed = f"{r.ms / kiln_ms:.2f}x"
        lines.append(f"| {r.name} | {fmt_ms(r.ms)} | {speed} | {r.note} |")
    ratio, speedup = ratio_line(kiln_ms, best)
    if ratio is None:
        lines.append("| **kiln / best torch** | n/a | n/a | "
                     + ("kiln failed" if kiln_ms is None else "no torch result")
                     + " |")
    else:
        lines.append(f"| **kiln / best torch** ({best.name}) | **{ratio:.3f}** "
                     f"| **{speedup:.2f}x** | speedup = best torch / kiln |")
    return "\n".join(lines) + "\n"


def summary_line(title, rows):
    kiln = next((r for r in rows if not r.torch), None)
    best = best_torch(rows)
    ratio, speedup = ratio_line(kiln.ms if kiln else None, best)
    if ratio is None:
        return f"| {title} | {fmt_ms(kiln.ms if kiln else None)} | " \
               f"{fmt_ms(best.ms) if best else 'failed'} | n/a | n/a |"
    return (f"| {title} | {fmt_ms(kiln.ms)} | {fmt_ms(best.ms)} ({best.name}) "
            f"| {ratio:.3f} | {speedup:.2f}x |")


def short_error(e):
    """An exception as `Type: first line of its message` (160 characters)."""
    text = str(e).strip().splitlines()
    return (f"{type(e).__name__}: {text[0]}" if text else type(e).__name__)[:160]


def environment(dry_run=False):
    import torch
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = "not installed"
    commit_path = os.path.join(HERE, "COMMIT")
    commit = open(commit_path).read().strip() if os.path.exists(commit_path) else "unknown"
    env = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": "none (dry run on the CPU)" if dry_run else torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda (torch)": torch.version.cuda,
        "triton": triton_version,
        "kiln commit": commit,
    }
    flashrnn_path = os.path.join(HERE, "FLASHRNN_COMMIT")
    if os.path.exists(flashrnn_path):
        env["flashrnn commit"] = open(flashrnn_path).read().strip()
    return env


def run_workloads(args, workloads):
    """Runs the selected workloads (key, title, goal, run(args, title) ->
    (rows, notes)), printing each table; a workload that raises gets a
    failed kiln row. Returns (Markdown sections, summary lines,
    {key: rows})."""
    sections, summary, results = [], [], {}
    for key, title, goal, run in workloads:
        if not selected(key, args.only):
            continue
        print(f"\n== {title}", flush=True)
        try:
            rows, notes = run(args, title)
        except Exception as e:
            traceback.print_exc()
            rows, notes = [Row("kiln", None, f"failed: {e}", torch=False)], []
        table = format_table(title, rows, goal)
        if notes:
            table += "\n" + "\n".join(notes) + "\n"
        print("\n" + table, flush=True)
        sections.append(table)
        summary.append(summary_line(title, rows))
        results[key] = rows
    return sections, summary, results


def write_results(path, env, args, summary, extra, sections):
    """The Markdown file: the environment, the method, the summary table,
    `extra` ([(heading, tables)], printed too) and the workloads' tables."""
    md = ["# kiln against PyTorch", ""]
    md += [f"- {k}: {v}" for k, v in env.items()]
    md += [f"- method: medians of {args.iters} CUDA-event-timed calls after "
           f"{args.warmup} warm-up calls, back to back on the same inputs; "
           "kiln: kiln-run --bench (replays of the entry's CUDA graph); "
           "torch: the same events around each call (compiled variants "
           "warmed up, so compilation is excluded)",
           "- kiln's train_step replays run with the runtime's lr 0 and step 1 "
           "(the same kernels as any other lr); torch uses lr 1e-3", ""]
    md += ["## Summary", "", "| workload | kiln ms | best torch ms | kiln / best torch "
           "| speedup |", "|---|---:|---:|---:|---:|"] + summary + [""]
    for heading, tables in extra:
        if tables:
            md += [f"## {heading}", ""] + tables
            print("\n" + "\n".join(tables), flush=True)
    md += ["## Workloads", ""] + sections
    with open(path, "w") as f:
        f.write("\n".join(md))
    print(f"wrote {path}")


# ---------------------------------------------------------------------------
# Timing.

def time_kiln(artifact, entry, inputs, params, warmup, iters, extra=()):
    """Runs kiln-run --bench (with `extra` flags); returns (Row fields ms,
    note)."""
    cmd = [os.path.join(HERE, "kiln-run"), artifact, "--entry", entry,
           "--inputs", inputs, "--bench", "--warmup", str(warmup),
           "--iters", str(iters), *extra]
    if params:
        cmd += ["--params", params]
    print("$", " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    print(text.rstrip(), flush=True)
    parsed = parse_kiln_bench(text)
    if proc.returncode != 0 or parsed is None:
        tail = " ".join(text.strip().splitlines()[-1:])[:160]
        return None, f"kiln-run exit {proc.returncode}: {tail}"
    note = (f"graph replays; min {parsed['min']:.4f} ms, "
            f"mean {parsed['mean']:.4f} ms")
    if parsed["programmatic"]:
        note += "; " + parsed["programmatic"]
    memory = KILN_BENCH_MEMORY.search(text)
    if memory:
        note += f"; peak device memory {int(memory.group(1)) / 2 ** 20:.0f} MiB"
    return parsed["median"], note


def time_events(fn, warmup, iters):
    """Median ms of `iters` back-to-back calls, each between two CUDA events
    (as kiln-run times its replays), after `warmup` calls."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def time_calls(fn, args):
    """time_events(fn) after max(--warmup, 3) calls; --dry-run: the median
    of 3 calls on the CPU clock."""
    if not args.dry_run:
        return time_events(fn, max(args.warmup, 3), args.iters)
    import time
    fn()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def cuda_graph_call(call):
    """`call` captured once as a CUDA graph (after three calls on a side
    stream, as torch.cuda.graph asks); returns the graph's replay."""
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph.replay


# ---------------------------------------------------------------------------
# PyTorch and kiln-run side by side: tensors, the bundle's artifacts, the
# torch variants every workload times.

TORCH_DTYPES = {"F32": "float32", "BF16": "bfloat16", "F16": "float16",
                "I32": "int32", "BOOL": "bool"}


def safetensors_entry(t):
    """A torch tensor as write_safetensors' (dtype, shape, bytes)."""
    import torch
    dtype = next(k for k, v in TORCH_DTYPES.items() if getattr(torch, v) == t.dtype)
    raw = t.detach().cpu().contiguous()
    return dtype, list(raw.shape), ctypes.string_at(
        raw.data_ptr(), raw.numel() * raw.element_size())


def torch_tensor(entry, device="cuda"):
    """read_safetensors' (dtype, shape, bytes) as a torch tensor on `device`."""
    import torch
    dtype, shape, data = entry
    t = torch.frombuffer(bytearray(data), dtype=getattr(torch, TORCH_DTYPES[dtype]))
    return t.reshape(shape).to(device)


def kiln_outputs(artifact, entry, inputs, path, extra=()):
    """Runs the entry once (kiln-run --output PATH, and `extra` flags);
    returns (its outputs as read_safetensors gives them, None) or (None, the
    error)."""
    cmd = [os.path.join(HERE, "kiln-run"), artifact, "--entry", entry,
           "--inputs", inputs, "--output", path, *extra]
    proc = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = " ".join((proc.stdout + proc.stderr).strip().splitlines()[-1:])[:160]
        return None, f"kiln-run --output exit {proc.returncode}: {tail}"
    outputs = read_safetensors(path)
    os.remove(path)
    return outputs, None


def load_torch(path, device="cuda"):
    return {name: torch_tensor(entry, device)
            for name, entry in read_safetensors(path).items()}


def kiln_artifact_or_why(name, bundle=HERE):
    """(path of NAME.kiln, None), or (None, why there is none: kilnc's
    message from NAME.kilnc-error when kilnc failed on the model)."""
    artifact = os.path.join(bundle, f"{name}.kiln")
    if os.path.exists(artifact):
        return artifact, None
    failed = os.path.join(bundle, f"{name}.kilnc-error")
    if os.path.exists(failed):
        lines = [l for l in open(failed).read().splitlines() if "error" in l]
        return None, "kilnc failed: " + (lines[0] if lines else f"see {name}.kilnc-error")[:200]
    return None, f"no {name}.kiln in the bundle"


MODES = [("torch eager", None), ("torch.compile", "default"),
         ("torch.compile reduce-overhead", "reduce-overhead")]


def torch_inference_call(f, mode, *args):
    """f(*args) without autograd as a callable, compiled unless mode is None
    (eager); "reduce-overhead" replays CUDA graphs."""
    import torch
    if mode is not None:
        torch._dynamo.reset()
        f = torch.compile(f, mode=mode)
    graphs = mode == "reduce-overhead"

    def call():
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad():
            return f(*args)
    return call


# ---------------------------------------------------------------------------
# Checks against references in f64.

def rel_l2(y, ref):
    """(relative L2 error of y against ref, non-finite count of y)."""
    import torch
    y = y.double()
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    return float(diff.norm() / max(float(ref.norm()), 1e-30)), nonfinite


def output_check_note(what, errors, limit=1e-2, who="kiln"):
    """(ok, note) of `who`'s outputs against a reference in f64: `errors` is
    [(output, relative L2 error, non-finite count)]; each must stay under
    `limit` (bf16 outputs) with every element finite."""
    ok = all(nonfinite == 0 and rel < limit for _, rel, nonfinite in errors)
    parts = [f"{out} rel L2 err {rel:.2e}" + (f", {nonfinite} non-finite" if nonfinite else "")
             for out, rel, nonfinite in errors]
    return ok, f"{who}'s outputs vs {what}: {'; '.join(parts)}: {'ok' if ok else 'FAILED'}"


# ---------------------------------------------------------------------------
# The command line.

def selected(key, only):
    """Whether --only's names (a workload's key, or a prefix of keys up to
    an underscore: rnn, rnn_lstm, rnn_lstm_12x64) select the workload; all
    when none are given."""
    return not only or any(key == n or key.startswith(n + "_") for n in only)


def comma_list(text):
    """A comma-separated option as a list, empty items dropped."""
    return [v for v in text.split(",") if v]


def check_choices(parser, choices):
    """parser.error for the first of [(values, known, flag)] whose values
    are not all known."""
    for values, known, flag in choices:
        if set(values) - set(known):
            parser.error(f"{flag}: unknown {', '.join(sorted(set(values) - set(known)))}")


# ---------------------------------------------------------------------------
# Self-test (no GPU, no PyTorch).

def self_test():
    self_test_parsing()
    self_test_tables()
    self_test_selection()
    self_test_bundle_files()
    self_test_safetensors()


def self_test_parsing():
    line = ("ran train_step: 1 output(s)\nbench train_step: median 0.0421 ms, "
            "min 0.0400 ms, mean 0.0433 ms over 200 replays (20 warm-up calls)\n")
    b = parse_kiln_bench(line)
    assert b == {"entry": "train_step", "median": 0.0421, "min": 0.04,
                 "mean": 0.0433, "replays": 200, "programmatic": None}, b
    b = parse_kiln_bench(line.replace("calls)", "calls; 38 of 40 launches "
                                      "programmatic)"))
    assert b["programmatic"] == "38 of 40 launches programmatic", b
    assert parse_kiln_bench("error: no CUDA device\n") is None
    m = KILN_BENCH_MEMORY.search(line + "bench memory: peak 641728512 bytes in use "
                                 "(612.0 MiB), 650117120 reserved from the device\n")
    assert m and int(m.group(1)) == 641728512, m
    assert short_error(ValueError("first\nsecond")) == "ValueError: first"
    assert short_error(KeyError()) == "KeyError"


def self_test_tables():
    rows = [Row("kiln", 0.05, torch=False), Row("torch eager", 3.0),
            Row("torch.compile", 2.0), Row("torch.compile reduce-overhead", 1.0)]
    assert best_torch(rows).name == "torch.compile reduce-overhead"
    ratio, speedup = ratio_line(0.05, best_torch(rows))
    assert abs(ratio - 0.05) < 1e-12 and abs(speedup - 20.0) < 1e-12
    table = format_table("t", rows, "goal")
    last = table.strip().splitlines()[-1]
    assert "kiln / best torch" in last and "0.050" in last and "20.00x" in last, last
    assert "| torch eager | 3.000 | 60.00x |" in table, table
    assert "| kiln | 0.0500 |  |" in table, table
    assert summary_line("t", rows).endswith("| 0.050 | 20.00x |")

    # Failed rows: ignored for the best; a failed kiln gives no ratio.
    rows = [Row("kiln", 0.5, torch=False), Row("torch eager", None, "failed"),
            Row("torch.compile", 0.4)]
    assert best_torch(rows).name == "torch.compile"
    assert "1.250" in format_table("t", rows).strip().splitlines()[-1]
    rows = [Row("kiln", None, torch=False), Row("torch eager", 1.0)]
    assert "kiln failed" in format_table("t", rows)
    assert ratio_line(None, best_torch(rows)) == (None, None)
    assert ratio_line(1.0, None) == (None, None)
    assert "no torch result" in format_table("t", [Row("kiln", 1.0, torch=False)])
    assert fmt_ms(None) == "failed" and fmt_ms(0.01234) == "0.0123"

    ok, note = output_check_note("conv2d in f64", [("y", 2e-3, 0), ("dw", 4e-3, 0)])
    assert ok and note == ("kiln's outputs vs conv2d in f64: y rel L2 err 2.00e-03; "
                           "dw rel L2 err 4.00e-03: ok"), note
    ok, note = output_check_note("r", [("y", 2e-3, 0), ("dx", 2e-3, 7)])
    assert not ok and "7 non-finite" in note and note.endswith("FAILED"), note
    assert not output_check_note("r", [("y", 0.5, 0)])[0]
    assert not output_check_note("r", [("y", float("nan"), 0)])[0]


def self_test_selection():
    # --only: workload keys and prefixes of them up to an underscore.
    assert selected("rnn_lstm_12x64_fwd", set())
    assert selected("rnn_lstm_12x64_fwd", {"rnn"})
    assert selected("rnn_lstm_12x64_fwd", {"rnn_lstm_12x64"})
    assert selected("rnn_lstm_12x64_fwd", {"gemm_big", "rnn_lstm_12x64_fwd"})
    assert not selected("rnn_lstm_12x64_fwd", {"rnn_lstm_12x64_fwdbwd"})
    assert not selected("rnn_lstm_12x64_fwd", {"rnn_ls"})
    assert selected("gemm_big", {"gemm"})
    assert not selected("mlp", {"rnn"})
    assert comma_list("a,,b,") == ["a", "b"] and comma_list("") == []


def self_test_bundle_files():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        # A model kilnc could not compile: its message, else a missing file.
        with open(os.path.join(d, "m.kilnc-error"), "w") as f:
            f.write("m.mlir:4:8: error: no GPU kernel for 'kiln.conv2d' yet\n  ^\n")
        assert kiln_artifact_or_why("m", d) == (
            None, "kilnc failed: m.mlir:4:8: error: no GPU kernel for 'kiln.conv2d' yet")
        assert kiln_artifact_or_why("n", d) == (None, "no n.kiln in the bundle")
        open(os.path.join(d, "m.kiln"), "w").close()
        assert kiln_artifact_or_why("m", d) == (os.path.join(d, "m.kiln"), None)


def self_test_safetensors():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.safetensors")
        tensors = {"x": ("F32", [2, 3], struct.pack("<6f", *range(6))),
                   "b": ("BF16", [2], b"\x80\x3f\x00\x40"),
                   "s": ("I32", [], struct.pack("<i", 7))}
        write_safetensors(path, tensors, {"kiln.function": "f"})
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
        assert n % 8 == 0
        assert read_safetensors(path) == tensors
        try:
            write_safetensors(path, {"x": ("F32", [3], b"\0" * 8)})
            raise AssertionError("a wrong size was accepted")
        except ValueError:
            pass
    # The bundle's own files, where present.
    for name in sorted(os.listdir(HERE)):
        if name.endswith(".safetensors"):
            for t, (dtype, shape, data) in read_safetensors(os.path.join(HERE, name)).items():
                count = 1
                for s in shape:
                    count *= s
                assert count * DTYPE_SIZES[dtype] == len(data), (name, t)
