"""Recurrent layers: kiln.rnn (FlashRNN's layouts, the input projection wx
computed outside the layer) against the same equations in PyTorch
(samples/torch/kiln_rnn.py), cuDNN (one head of 768) and FlashRNN (each of
its backends, and the whole-sequence torch.compile, built and timed in a
process of its own: run.py --rnn-worker)."""

import json
import os
import subprocess
import sys
import traceback

from bench_harness import (HERE, Row, cuda_graph_call, fmt_ms,
                           kiln_artifact_or_why, kiln_outputs, safetensors_entry,
                           selected, short_error, time_events, time_kiln,
                           torch_tensor, write_safetensors)

RNN_B, RNN_T = 16, 1024
# (Gw, Gr, Gb, S) of each cell function: kiln.rnn's table.
RNN_SIZES = {"lstm": (4, 4, 4, 2), "gru": (3, 3, 4, 1),
             "elman": (1, 1, 1, 1), "slstm": (4, 4, 4, 4)}
RNN_NAMES = {"lstm": "LSTM", "gru": "GRU", "elman": "Elman", "slstm": "sLSTM"}
# The cell functions of FlashRNN's backends (its triton_fused has lstm and
# slstm only; its cuda_fused runs gru on the cuda backend).
FLASHRNN_FUNCTIONS = {"triton_fused": ("lstm", "slstm"),
                      "cuda": ("lstm", "gru", "elman", "slstm"),
                      "cuda_fused": ("lstm", "elman", "slstm"),
                      "vanilla": ("lstm", "gru", "elman", "slstm")}
# The equations in PyTorch: eager, eager replayed as one CUDA graph, the
# step under torch.compile (called T times), the same as one CUDA graph, and
# the whole sequence under torch.compile (unrolled over T: slow to compile,
# so in its own process under --rnn-timeout, and only when asked for).
RNN_TORCH_VARIANTS = {"eager": "torch eager",
                      "eager_graph": "torch eager, CUDA graph",
                      "cell": "torch.compile (per-step cell)",
                      "cell_graph": "torch.compile (per-step cell), CUDA graph",
                      "full": "torch.compile (whole sequence)"}
RNN_RESULT = "rnn result: "


def rnn_shape(args, nh, d):
    """(B, T, NH, D) run: the workload's, or tiny ones for --dry-run."""
    if args.dry_run:
        return 2, 6, min(nh, 2), 8
    return RNN_B, RNN_T, nh, d


def rnn_tensors(function, b, t, nh, d, device="cuda", dtype="bfloat16"):
    """kiln.rnn's operands drawn as FlashRNN's benchmark draws them (torch,
    seed 1): wx and b N(0, 1), r N(0, 1) / sqrt(D); s0 zeros."""
    import torch
    gw, gr, gb, s = RNN_SIZES[function]
    gen = torch.Generator(device=device).manual_seed(1)
    dt = getattr(torch, dtype)

    def normal(shape, scale=1.0):
        return (torch.randn(shape, generator=gen, device=device) * scale).to(dt)
    return {"wx": normal([b, t, gw, nh, d]), "r": normal([gr, nh, d, d], d ** -0.5),
            "b": normal([gb, nh, d]),
            "s0": torch.zeros([s, b, nh, d], device=device, dtype=dt)}


def rnn_inputs(name, tensors, workdir):
    """Writes the artifact's inputs: NAME.rnn.safetensors (wx, r, b, s0: the
    inputs of the entry rnn, and the parameters of forward_backward, whose
    only input s0 is in NAME.s0.safetensors). Returns the two paths."""
    every = os.path.join(workdir, f"{name}.rnn.safetensors")
    write_safetensors(every, {k: safetensors_entry(v) for k, v in tensors.items()},
                      {"kiln.function": "rnn"})
    s0 = os.path.join(workdir, f"{name}.s0.safetensors")
    write_safetensors(s0, {"s0": safetensors_entry(tensors["s0"])},
                      {"kiln.function": "loss"})
    return every, s0


_KILN_RNN = {}


def kiln_rnn_module(path=None):
    """samples/torch/kiln_rnn.py (rnn_forward(function, wx, r, b, s0) ->
    (states, last_states)): `path`, else the bundle's copy, else the
    checkout's (run.py run from bench/)."""
    import importlib.util
    candidates = [path] if path else [
        os.path.join(HERE, "kiln_rnn.py"),
        os.path.join(HERE, "..", "samples", "torch", "kiln_rnn.py")]
    for candidate in candidates:
        if os.path.exists(candidate):
            candidate = os.path.abspath(candidate)
            if candidate not in _KILN_RNN:
                spec = importlib.util.spec_from_file_location("kiln_rnn", candidate)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _KILN_RNN[candidate] = module
            return _KILN_RNN[candidate]
    raise FileNotFoundError("no kiln_rnn.py (samples/torch/) in the bundle or "
                            "the checkout")


def rnn_call(forward, tensors, backward):
    """One call of forward(wx, r, b, s0) -> (states, last_states) as a
    callable: without autograd, or (backward) the sum of every state after
    every step and its backward pass into wx, r and b (the previous
    gradients dropped first), as kiln's forward_backward computes."""
    import torch
    wx, r, b, s0 = (tensors[k] for k in ("wx", "r", "b", "s0"))
    if not backward:
        def call():
            with torch.no_grad():
                return forward(wx, r, b, s0)
        return call
    leaves = [t.detach().clone().requires_grad_(True) for t in (wx, r, b)]

    def call():
        for leaf in leaves:
            leaf.grad = None
        states, _ = forward(*leaves, s0)
        states.sum().backward()
    return call


def rnn_cell_loop(step):
    """forward(wx, r, b, s0) from step(wx_t, r, b, s) -> (states [S,B,1,NH,D],
    last [S,B,NH,D]) called once per time step, the states concatenated."""
    import torch

    def forward(wx, r, b, s0):
        s, outs = s0, []
        for t in range(wx.shape[1]):
            states, s = step(wx[:, t:t + 1], r, b, s)
            outs.append(states)
        return torch.cat(outs, dim=2), s
    return forward


def rnn_forward_of(rnn, function, compile_step=False, compile_all=False):
    """kiln_rnn's rnn_forward for `function`: eager, its step (a call at
    T = 1) compiled once and called T times, or compiled whole."""
    import torch

    def forward(wx, r, b, s0):
        return rnn.rnn_forward(function, wx, r, b, s0)
    if compile_step:
        torch._dynamo.reset()
        return rnn_cell_loop(torch.compile(forward))
    if compile_all:
        torch._dynamo.reset()
        return torch.compile(forward)
    return forward


def time_rnn(fn, args):
    """(median ms, calls timed): time_events with as many calls as fit in
    about --rnn-seconds (at least 5, at most --iters; the warm-up a quarter
    of them, at least 2), sized by the second call (the first compiles);
    eager recurrences take tens of milliseconds a call. --dry-run: the
    second call on the CPU clock."""
    import time
    fn()
    sync = (lambda: None) if args.dry_run else __import__("torch").cuda.synchronize
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - start
    if args.dry_run:
        return once * 1e3, 1
    iters = max(5, min(args.iters, int(args.rnn_seconds / max(once, 1e-6))))
    warmup = max(2, min(args.warmup, iters // 4))
    return time_events(fn, warmup, iters), iters


def rnn_errors(y, ref):
    """(max |y - ref| / max |ref|, relative L2 error, non-finite count)."""
    import torch
    y = y.double()
    nonfinite = int((~torch.isfinite(y)).sum())
    diff = torch.nan_to_num(y - ref, nan=float("inf"))
    scale = max(float(ref.abs().max()), 1e-30)
    return (float(diff.abs().max()) / scale,
            float(diff.norm() / max(float(ref.norm()), 1e-30)), nonfinite)


def rnn_reference(rnn, function, tensors):
    """Every state of the equations (kiln_rnn.py) in f64 on the same inputs."""
    import torch
    with torch.no_grad():
        return rnn.rnn_forward(function, *(tensors[k].double()
                                           for k in ("wx", "r", "b", "s0")))[0]


def rnn_check_note(who, errors, torch_errors=None):
    """(ok, note) of `who`'s states against the f64 equations: every element
    finite and a relative L2 error under 2e-2 (bf16 states over T steps), or
    under twice that of torch eager on the bf16 inputs when larger."""
    max_err, rel, nonfinite = errors
    limit = 2e-2
    note = (f"{who}'s states vs the equations in f64 (kiln_rnn.py, on the same "
            f"inputs): max err {max_err:.2e} of max |states|, rel L2 err "
            f"{rel:.2e}, {nonfinite} non-finite")
    if torch_errors is not None:
        limit = max(limit, 2 * torch_errors[1])
        note += (f"; torch eager on the bf16 inputs: max err {torch_errors[0]:.2e}, "
                 f"rel L2 {torch_errors[1]:.2e}")
    ok = nonfinite == 0 and rel < limit
    return ok, note + f": {'ok' if ok else 'FAILED'}"


def check_rnn(artifact, inputs, tensors, function, rnn, workdir):
    """Runs the entry rnn once and compares its states with the equations in
    f64 (and, for scale, torch eager's states from the bf16 inputs: kiln_rnn.py
    computes in f32 and rounds its results to bf16)."""
    outputs, error = kiln_outputs(artifact, "rnn", inputs, os.path.join(
        workdir, "kiln_rnn_output.safetensors"))
    if error:
        return False, error
    ref = rnn_reference(rnn, function, tensors)
    eager = rnn_call(rnn_forward_of(rnn, function), tensors, False)()[0]
    return rnn_check_note("kiln", rnn_errors(torch_tensor(outputs["states"]), ref),
                          rnn_errors(eager, ref))


def cudnn_calls(function, hidden, dtype, backward, b, t, device="cuda"):
    """nn.LSTM / nn.GRU, one layer of `hidden` with input size `hidden` (as
    FlashRNN's benchmark runs it: cuDNN computes the input projection
    x @ W_ih^T itself) on x [B, T, hidden] ~ N(0, 1), without autograd or
    (backward) with the sum of every step's h and its backward pass into x
    and the weights. Returns (that call, the input projection alone with the
    same autograd)."""
    import torch
    import torch.nn.functional as F
    cls = torch.nn.LSTM if function == "lstm" else torch.nn.GRU
    layer = cls(hidden, hidden, batch_first=True).to(device=device, dtype=dtype)
    gen = torch.Generator(device=device).manual_seed(1)
    x = torch.randn([b, t, hidden], generator=gen, device=device).to(dtype)

    def projection():
        return F.linear(x, layer.weight_ih_l0, layer.bias_ih_l0)
    if not backward:
        def call():
            with torch.no_grad():
                return layer(x)

        def proj():
            with torch.no_grad():
                return projection()
        return call, proj
    x.requires_grad_(True)

    def call():
        x.grad = None
        layer.zero_grad(set_to_none=True)
        layer(x)[0].sum().backward()

    def proj():
        x.grad = None
        layer.zero_grad(set_to_none=True)
        projection().sum().backward()
    return call, proj


def runs_cudnn_rnn(call):
    """Whether one call dispatches to cuDNN's RNN (aten::_cudnn_rnn) rather
    than to PyTorch's own LSTM/GRU kernels."""
    import torch
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        call()
    return any("_cudnn_rnn" in event.key for event in prof.key_averages())


def rearrange_permutation(x, pattern, **sizes):
    """einops.rearrange for patterns that only permute axes ("a b c -> c a
    b"), all that FlashRNN's Triton backend asks of einops."""
    lhs, rhs = (side.split() for side in pattern.split("->"))
    if "(" in pattern or sorted(lhs) != sorted(rhs) or len(lhs) != len(x.shape):
        raise ValueError(f"not a permutation of {len(x.shape)} axes: {pattern!r}")
    for name, size in sizes.items():
        if x.shape[lhs.index(name)] != size:
            raise ValueError(f"{pattern!r}: {name} is {x.shape[lhs.index(name)]}, not {size}")
    return x.permute(*[lhs.index(name) for name in rhs])


def flashrnn_module():
    """FlashRNN's flashrnn() from the bundle's flashrnn/ (bench/make_bundle.sh),
    with stand-ins for einops and packaging where they are not installed;
    returns (flashrnn, notes)."""
    import types
    if not os.path.isdir(os.path.join(HERE, "flashrnn")):
        raise FileNotFoundError("FlashRNN's source is not in the bundle "
                                "(bench/make_bundle.sh, FLASHRNN_GIT)")
    notes = []
    try:
        import einops  # noqa: F401
    except ImportError:
        einops = types.ModuleType("einops")
        einops.rearrange = rearrange_permutation
        sys.modules["einops"] = einops
        notes.append("einops not installed: its permutations done by run.py")
    try:
        import packaging.version  # noqa: F401
    except ImportError:
        from setuptools._vendor import packaging  # setuptools' own copy
        sys.modules["packaging"] = packaging
        sys.modules["packaging.version"] = packaging.version
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    from flashrnn import flashrnn
    return flashrnn, notes


def flashrnn_forward(flashrnn, function, backend):
    """forward(wx, r, b, s0) through FlashRNN (its own zero initial states:
    s0 is zeros), which takes kiln.rnn's layouts as they are."""
    def forward(wx, r, b, s0):
        return flashrnn(wx, r, b, states=None, function=function,
                        backend=backend, dtype=str(wx.dtype).split(".")[-1])
    return forward


def rnn_worker(spec):
    """A FlashRNN backend or the whole-sequence torch.compile in a process
    of its own: builds it, times each of spec["directions"] ("fwd",
    "fwdbwd") and prints one line RNN_RESULT + JSON {direction: {"ms",
    "note"} or {"error"}}."""
    import time
    import types
    import torch
    args = types.SimpleNamespace(**spec["timing"])
    function = spec["function"]
    b, t, nh, d = spec["shape"]
    tensors = rnn_tensors(function, b, t, nh, d, spec["device"])
    results = {}
    try:
        if spec["kind"] == "flashrnn":
            flashrnn, notes = flashrnn_module()
            forward = flashrnn_forward(flashrnn, function, spec["backend"])
        else:
            notes = []
            forward = rnn_forward_of(kiln_rnn_module(spec["kiln_rnn"]), function,
                                     compile_all=True)
    except Exception as e:
        traceback.print_exc()
        results = {k: {"error": short_error(e)} for k in spec["directions"]}
        forward = None
    for direction in spec["directions"] if forward else []:
        if results:
            failed = next(iter(results.values())).get("error")
            if failed:
                results[direction] = {"error": failed + " (in the forward pass)"}
                continue
        try:
            call = rnn_call(forward, tensors, direction == "fwdbwd")
            start = time.perf_counter()
            out = call()
            if not args.dry_run:
                torch.cuda.synchronize()
            first = time.perf_counter() - start
            ms, iters = time_rnn(call, args)
            note = [f"{iters} calls", f"first call {first:.1f} s (builds, excluded)"] + notes
            if direction == "fwd" and spec["kind"] == "flashrnn":
                try:
                    rnn = kiln_rnn_module(spec["kiln_rnn"])
                    ok, check = rnn_check_note(
                        "FlashRNN", rnn_errors(out[0], rnn_reference(rnn, function, tensors)))
                    note.append(check.replace("FlashRNN's states vs", "states vs"))
                except Exception as e:
                    note.append(f"no check against the equations: {short_error(e)}")
            results[direction] = {"ms": ms, "note": "; ".join(note)}
        except Exception as e:
            traceback.print_exc()
            results[direction] = {"error": short_error(e)}
        out = call = None
    print(RNN_RESULT + json.dumps(results), flush=True)
    return 0


def parse_rnn_result(text):
    """The worker's result line -> {direction: {...}}, or None."""
    for line in reversed(text.splitlines()):
        if line.startswith(RNN_RESULT):
            return json.loads(line[len(RNN_RESULT):])
    return None


def rnn_worker_rows(args, label, key, spec, direction):
    """The worker's row for `direction`. The worker runs once per model and
    variant (key) for every selected direction, its results kept in
    args.rnn_results; killed (its process group) after --rnn-timeout s."""
    import signal
    if key not in args.rnn_results:
        cmd = [sys.executable, os.path.join(HERE, "run.py"), "--rnn-worker",
               json.dumps(spec)]
        print("$", " ".join(cmd[:3]), f"'{cmd[3]}'", flush=True)
        proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            text, _ = proc.communicate(timeout=args.rnn_timeout)
            result = parse_rnn_result(text)
            if result is None:
                tail = " ".join(text.strip().splitlines()[-1:])[:160]
                result = {k: {"error": f"exit {proc.returncode}: {tail}"}
                          for k in spec["directions"]}
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            result = {k: {"error": f"no result within {args.rnn_timeout} s "
                          "(--rnn-timeout)"} for k in spec["directions"]}
        print("\n".join(text.rstrip().splitlines()[-40:]), flush=True)
        args.rnn_results[key] = result
    result = args.rnn_results[key].get(direction, {"error": "not run"})
    if "error" in result:
        return Row(label, None, f"did not build/run: {result['error']}")
    return Row(label, result["ms"], result["note"])


def rnn_directions(args, function, nh, d):
    """The directions of this model that the run selects (a worker times
    them all at once)."""
    return [k for k in ("fwd", "fwdbwd")
            if selected(f"rnn_{function}_{nh}x{d}_{k}", args.only)]


def run_rnn(args, title, function, nh, d, backward, goal_ms):
    w = rnn_workload(args, function, nh, d, backward)
    notes = [] if not args.dry_run else [
        f"dry run on the CPU at B{w.b} T{w.t} {w.nh_run}x{w.d_run}: no kiln, no CUDA graphs"]
    rows = [rnn_kiln_row(args, w, notes)]
    rows += rnn_torch_rows(args, title, w)
    if nh == 1 and function in ("lstm", "gru"):
        rows += rnn_cudnn_rows(args, title, w)
    rows += rnn_flashrnn_rows(args, title, w)
    if function == "slstm" and any(r.name.startswith("FlashRNN") for r in rows):
        notes.append("FlashRNN's sLSTM bounds its normaliser, n' = max(f n + i, 1) "
                     "(kiln.rnn: n' = f n + i): its states differ from these "
                     "equations, its work is the same")
    if goal_ms is not None:
        kiln_ms = rows[0].ms
        status = ("kiln failed" if kiln_ms is None else
                  f"kiln {fmt_ms(kiln_ms)} ms: {'met' if kiln_ms <= goal_ms else 'not met'}")
        notes.append(f"goal ≤ {goal_ms} ms (TARGETS.md): {status}")
    notes.append(RNN_TIMED_NOTE)
    return rows, notes


def rnn_workload(args, function, nh, d, backward):
    """What every row of one recurrent workload needs: its name, direction,
    run size, tensors and the equations in PyTorch (or why they failed to
    load)."""
    import types
    b, t, nh_run, d_run = rnn_shape(args, nh, d)
    device = "cpu" if args.dry_run else "cuda"
    try:
        rnn, rnn_error = kiln_rnn_module(args.kiln_rnn), None
    except Exception as e:
        rnn, rnn_error = None, short_error(e)
    return types.SimpleNamespace(
        name=f"rnn_{function}_{nh}x{d}", function=function, nh=nh, d=d,
        backward=backward, direction="fwdbwd" if backward else "fwd",
        b=b, t=t, nh_run=nh_run, d_run=d_run, device=device,
        tensors=rnn_tensors(function, b, t, nh_run, d_run, device),
        rnn=rnn, rnn_error=rnn_error)


def rnn_kiln_row(args, w, notes):
    """kiln: the entry rnn (its states checked against the equations, the
    check appended to `notes`), or forward_backward (wx, r, b loaded as its
    parameters)."""
    artifact, why = kiln_artifact_or_why(w.name)
    if artifact is None:
        ms, note = None, why
    elif args.dry_run:
        ms, note = None, "not run (dry run)"
    elif w.backward:
        every, s0 = rnn_inputs(w.name, w.tensors, args.workdir)
        ms, note = time_kiln(artifact, "forward_backward", s0, every,
                             args.warmup, args.iters)
    else:
        every, _ = rnn_inputs(w.name, w.tensors, args.workdir)
        if w.rnn is None:
            ok, check = False, f"no check against the equations: {w.rnn_error}"
        else:
            ok, check = check_rnn(artifact, every, w.tensors, w.function, w.rnn,
                                  args.workdir)
        print(check, flush=True)
        notes.append(check if ok else "**" + check + "**")
        ms, note = time_kiln(artifact, "rnn", every, None, args.warmup, args.iters)
        if ms is not None:
            note += "; states " + ("agree" if ok else "DISAGREE") + " (below)"
    return Row("kiln", ms, note, torch=False)


def timed_rnn_row(args, title, label, make, note=""):
    """The row of the callable that make() builds, timed by time_rnn (a
    failed row when building or timing it raises)."""
    import torch
    fn = None
    try:
        fn = make()
        t_ms, iters = time_rnn(fn, args)
        row = Row(label, t_ms, "; ".join(filter(None, [f"{iters} calls", note])))
    except Exception as e:
        traceback.print_exc()
        row = Row(label, None, f"failed: {short_error(e)}")
    fn = None
    if not args.dry_run:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    print(f"{title}: {row.name}: {fmt_ms(row.ms)} ms {row.note}", flush=True)
    return row


def rnn_torch_rows(args, title, w):
    """The equations in PyTorch, the variants of --rnn-torch (the compiled
    step built once, for both of its variants)."""
    compiled, rows = {}, []

    def forward_of(key):
        if not key.startswith("cell"):
            return rnn_forward_of(w.rnn, w.function)
        if "step" not in compiled:
            compiled["step"] = rnn_forward_of(w.rnn, w.function, compile_step=True)
        return compiled["step"]
    for key in args.rnn_torch:
        label = RNN_TORCH_VARIANTS[key]
        if w.rnn is None:
            rows.append(Row(label, None, f"failed: {w.rnn_error}"))
        elif key == "full":
            spec = rnn_worker_spec(args, "compile", w.function, w.nh, w.d, None)
            rows.append(rnn_worker_rows(args, label, (w.name, key), spec, w.direction))
        elif key.endswith("_graph") and args.dry_run:
            rows.append(Row(label, None, "not run (dry run: no CUDA)"))
        else:
            def make(key=key):
                call = rnn_call(forward_of(key), w.tensors, w.backward)
                return cuda_graph_call(call) if key.endswith("_graph") else call
            rows.append(timed_rnn_row(args, title, label, make))
    return rows


def rnn_cudnn_rows(args, title, w):
    """cuDNN: one head, hidden 768 (the input projection included), in fp16
    and bf16."""
    import torch
    layer = "nn.LSTM" if w.function == "lstm" else "nn.GRU"
    rows = []
    for dtype in ("float16", "bfloat16"):
        dt = getattr(torch, dtype)
        short = "fp16" if dtype == "float16" else "bf16"
        try:
            call, proj = cudnn_calls(w.function, w.d_run, dt, w.backward, w.b, w.t,
                                     w.device)
            proj_ms, _ = time_rnn(proj, args)
            how = (f"cuDNN {torch.backends.cudnn.version()} (aten::_cudnn_rnn)"
                   if runs_cudnn_rnn(call) else "not cuDNN: PyTorch's own kernels")
            gates = RNN_SIZES[w.function][0] * w.d_run
            note = (f"{how}; includes the input projection "
                    f"x @ W_ih^T ([{w.b * w.t}x{w.d_run}] x [{w.d_run}x{gates}]), "
                    f"alone {fmt_ms(proj_ms)} ms")
            rows.append(timed_rnn_row(args, title, f"cuDNN {layer} {short}",
                                      lambda: call, note))
        except Exception as e:
            traceback.print_exc()
            rows.append(Row(f"cuDNN {layer} {short}", None, f"failed: {short_error(e)}"))
        call = proj = None
    return rows


def rnn_flashrnn_rows(args, title, w):
    """FlashRNN, each backend of --flashrnn-backends that has the cell
    function, in a process of its own."""
    rows = []
    for backend in args.flashrnn_backends:
        if w.function not in FLASHRNN_FUNCTIONS.get(backend, ()):
            continue
        spec = rnn_worker_spec(args, "flashrnn", w.function, w.nh, w.d, backend)
        rows.append(rnn_worker_rows(args, f"FlashRNN {backend}", (w.name, backend),
                                    spec, w.direction))
        print(f"{title}: {rows[-1].name}: {fmt_ms(rows[-1].ms)} ms {rows[-1].note}",
              flush=True)
    return rows


RNN_TIMED_NOTE = (
    "Timed: kiln, the equations in PyTorch and FlashRNN take the input "
    "projection wx [B,T,G,NH,D] precomputed (FlashRNN's benchmark); cuDNN "
    "computes it inside nn.LSTM / nn.GRU (its share timed alone in the note). "
    "fwd: no autograd; fwd+bwd: the sum of every state (cuDNN: of every step's "
    "h) and its backward pass into wx, r and b (cuDNN: x and the weights). "
    "Slow variants are timed over fewer calls (--rnn-seconds); FlashRNN's "
    "kernels and torch.compile are built before timing.")


def rnn_worker_spec(args, kind, function, nh, d, backend):
    return {"kind": kind, "function": function, "backend": backend,
            "shape": list(rnn_shape(args, nh, d)),
            "device": "cpu" if args.dry_run else "cuda",
            "directions": rnn_directions(args, function, nh, d),
            "kiln_rnn": args.kiln_rnn,
            "timing": {"warmup": args.warmup, "iters": args.iters,
                       "rnn_seconds": args.rnn_seconds, "dry_run": args.dry_run}}


# (function, heads, head dim, forward goal, forward+backward goal in ms, the
# anchors TARGETS.md has for them).
RNN_WORKLOADS = [
    ("lstm", 12, 64, 1.0, 3.0,
     "FlashRNN Triton fused fwd 1.94 ms; FlashRNN alternating 12.5 / 31.9 ms"),
    ("lstm", 1, 768, 2.0, 6.0,
     "cuDNN nn.LSTM fp16 2.16 / 6.97 ms; bf16 16.3 / 35.2 ms"),
    ("gru", 1, 768, 3.0, 8.0, "cuDNN nn.GRU bf16 12.7 / 30.9 ms"),
    ("gru", 12, 64, None, None, ""),
    ("elman", 12, 64, None, None, ""),
    ("slstm", 12, 64, 1.5, None, ""),
]


def rnn_workloads():
    """WORKLOADS entries rnn_FUNCTION_NHxD_fwd and _fwdbwd."""
    out = []
    for function, nh, d, fwd_goal, fwdbwd_goal, anchors in RNN_WORKLOADS:
        for backward, goal in ((False, fwd_goal), (True, fwdbwd_goal)):
            what = "forward + backward" if backward else "forward"
            heads = f"{nh} heads x {d}" if nh > 1 else f"one head x {d}"
            title = (f"{RNN_NAMES[function]} B{RNN_B} T{RNN_T} bf16, {heads}, {what}"
                     + (f" (goal ≤ {goal} ms)" if goal is not None else ""))
            goal_text = ""
            if goal is not None:
                goal_text = f"≤ {goal} ms" + (f" (anchors: {anchors})" if anchors else "")
            key = f"rnn_{function}_{nh}x{d}_{'fwdbwd' if backward else 'fwd'}"
            out.append((key, title, goal_text,
                        lambda a, t, f=function, n=nh, dd=d, bw=backward, g=goal:
                        run_rnn(a, t, f, n, dd, bw, g)))
    return out


def self_test():
    # FlashRNN's einops permutations, on a stand-in tensor.
    class Axes:
        def __init__(self, shape):
            self.shape = list(shape)

        def permute(self, *order):
            return Axes([self.shape[i] for i in order])
    y = rearrange_permutation(Axes([2, 3, 5, 7]), "ns b nh dh -> nh ns b dh", dh=7)
    assert y.shape == [5, 2, 3, 7], y.shape
    for bad in ("a (b c) -> a b c", "a b -> a c", "a b c -> c b a"):
        try:
            rearrange_permutation(Axes([2, 3]), bad)
            raise AssertionError(f"accepted {bad!r}")
        except ValueError:
            pass
    try:
        rearrange_permutation(Axes([2, 3]), "a b -> b a", a=3)
        raise AssertionError("accepted a wrong size")
    except ValueError:
        pass

    # The worker's result line, its errors, and the states check.
    text = "building...\n" + RNN_RESULT + json.dumps(
        {"fwd": {"ms": 1.5, "note": "n"}, "fwdbwd": {"error": "E: x"}}) + "\n"
    assert parse_rnn_result(text) == {"fwd": {"ms": 1.5, "note": "n"},
                                      "fwdbwd": {"error": "E: x"}}
    assert parse_rnn_result("Traceback\n") is None
    ok, note = rnn_check_note("kiln", (1e-2, 3e-3, 0), (2e-2, 8e-3))
    assert ok and note.endswith(": ok") and "torch eager on the bf16" in note, note
    ok, note = rnn_check_note("kiln", (1e-1, 3e-2, 0), (2e-2, 1e-2))
    assert not ok and note.endswith("FAILED"), note
    assert rnn_check_note("kiln", (1e-1, 3e-2, 0), (2e-1, 5e-2))[0]
    assert not rnn_check_note("kiln", (1e-3, 1e-3, 2))[0]
    assert not rnn_check_note("kiln", (float("nan"), float("nan"), 0))[0]
    self_test_workloads()


def self_test_workloads():
    keys = [w[0] for w in rnn_workloads()]
    assert len(keys) == 2 * len(RNN_WORKLOADS), keys
    assert all(selected(k, {"rnn"}) for k in keys), keys
    titles = {w[0]: w[1] for w in rnn_workloads()}
    assert titles["rnn_lstm_12x64_fwd"].endswith("(goal ≤ 1.0 ms)"), titles
    assert titles["rnn_gru_1x768_fwdbwd"].endswith("(goal ≤ 8.0 ms)"), titles
    assert "goal" not in titles["rnn_slstm_12x64_fwdbwd"], titles
