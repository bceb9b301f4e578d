#!/usr/bin/env python3
"""The model zoo: real PyTorch models exported to ONNX and brought into kiln.

    zoo.py check --kilnc KILNC --kiln-ref KILN_REF --work DIR
        [--expectations FILE [--update]] [--models A,B] [--checks A,B]
        [--kilnc-flag FLAG]... [--size ci|full]
        [--shard I/N] [--jobs N] [--kernel-cache DIR] [--junit FILE] [--table FILE]
    zoo.py bundle --kilnc KILNC --out DIR [--models A,B] [--size full|ci]
    zoo.py export --out DIR [--exporter default|default-training|default-unoptimized|torchscript] [--models A,B] [--size ci|full]
    zoo.py gpu-reference BUNDLE MODEL
    zoo.py compare-steps TORCH_LOSSES.txt KILN_RUN.log [--rtol 1e-3]
    zoo.py compare-gradients EXPECTED_F64 TORCH_F32 KILN_OUTPUT [--what gradients|loss]

check: each model of models.py is exported with torch.onnx.export at opset
17 twice, for training (model and loss in one graph, TrainingMode.TRAINING:
batch norm on the batch's statistics) and for inference (eval mode, the
model's output), and goes through five checks:
  inference   kilnc NAME.infer.onnx --inference
  f32_sgd     kilnc NAME.train.onnx --trainable=PARAMS --train=sgd
  bf16_adamw  kilnc NAME.train.onnx --trainable=PARAMS --train=adamw --precision=bf16
  loss        kiln-ref on NAME.train.onnx in f64 at PyTorch's weights: the
              loss within 1e-5 relative of PyTorch's (f64)
  gradients   kilnc --emit=mlir --onnx-weights (the weights must equal
              PyTorch's), then kiln-ref's forward_backward in f64: every
              parameter's gradient within 1e-4 of PyTorch's relative to
              the gradient's norm (||kiln - torch|| / ||torch||)
PARAMS are the model's parameters (its buffers, batch norm's running
statistics, stay constants). Each outcome is `pass`, `skip: WHY` or
`fail: DIAGNOSTIC` (the tool's first error line, the work folder left
out); the expectations file holds one line `MODEL CHECK OUTCOME` per model
and check, and the run fails where an outcome differs from it (a model that
starts passing, or fails another way; numbers with a fraction or an
exponent in a diagnostic are compared as numbers of any value). --update
rewrites it from the run. --inference-weight-limit skips the inference
compiles of models whose weights exceed it (none by default: the artifact
carries the weights as data, so kilnc's time and memory do not grow with
them).

export: the models alone, by default with the exporter's own defaults (on
the GPU machine, current PyTorch: opset 18 and newer, external data);
check --exported DIR then checks those files instead of exporting here.

bundle: the GPU check (make_gpu_bundle.sh): per model, the artifacts
(inference, which carries the weights, where they are within
--inference-weight-limit, 16 MiB by default; f32 SGD and f32 AdamW compiled
with --fresh-params, so that they carry none), the batch, PyTorch's f64
inference output, the module's buffers and the digests of the exported
weights.
gpu-reference (there, with PyTorch): the weights again under the export's
seed and PyTorch's loss, its f64 and f32 gradients and its f64 and f32
30-step losses (f32 on the GPU in two layouts and on the CPU: the spread
of f32 is the yardstick of kiln's error); compare-steps compares those
losses with kiln-run's, compare-gradients the gradients (run_gpu_bundle.sh).
"""
import argparse
import concurrent.futures
import copy
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import warnings
import xml.etree.ElementTree as ElementTree

import numpy as np

CHECKS = ["inference", "f32_sgd", "bf16_adamw", "loss", "gradients"]
COMPILE_FLAGS = {"inference": ["--inference"], "f32_sgd": ["--train=sgd"],
                 "bf16_adamw": ["--train=adamw", "--precision=bf16"],
                 "f32_adamw": ["--train=adamw"]}
LOSS_RTOL, GRADIENT_TOLERANCE, F32_ERROR_RATIO = 1e-5, 1e-4, 4.0
STEPS, SGD_LR, ADAMW_LR = 30, 0.01, 1e-3
NUMBER = re.compile(r"-?\d+(\.\d*)?e[-+]?\d+|-?\d+\.\d+|\d+")

# --- safetensors ------------------------------------------------------------

DTYPES = {"F64": np.float64, "F32": np.float32, "I64": np.int64, "I32": np.int32, "BOOL": np.bool_}


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        array = np.asarray(array, order="C")  # (0-d stays 0-d)
        dtype = next(k for k, v in DTYPES.items() if v == array.dtype)
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    header.pop("__metadata__", None)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, np.uint16).astype(np.uint32) << 16
            array = bits.view(np.float32)
        else:
            array = np.frombuffer(raw, DTYPES[info["dtype"]])
        tensors[name] = array.reshape(info["shape"])
    return tensors


# --- PyTorch's side ----------------------------------------------------------

def onnx_export(model, args, path, exporter, **kwargs):
    """torch.onnx.export as a user calls it: "torchscript" at opset 17 (the
    exporter of PyTorch 1.x, training mode for the training graph), or
    "default": the call with no options (PyTorch 2.x's own defaults:
    opset 18 and newer, weights in a file beside the model), or
    "default-training": that call with training=TrainingMode.TRAINING for
    the training graph, the one option a user exporting to train adds, or
    "default-unoptimized": the default call with optimize=False (the
    exporter's graph before its optimizer folds constants). "torchscript"
    asks PyTorch 2.x for that exporter by name (dynamo=False)."""
    import inspect
    import torch
    if exporter == "default-unoptimized":
        kwargs["optimize"] = False
    if exporter.startswith("default"):
        torch.onnx.export(model, args, path, **kwargs)
        return
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, args, path, opset_version=17, **kwargs)


def export(name, size, out, exporter="torchscript"):
    """Exports model `name` to OUT/NAME.{train,infer}.onnx and writes
    OUT/NAME.inputs.safetensors (PyTorch's weights by initializer name, the
    batch and the target), OUT/NAME.torch.safetensors (PyTorch's f64 loss,
    grad.PARAM gradients and inference output) and OUT/NAME.json (the
    trainable parameters, the input names, the weights' bytes)."""
    import torch
    import models
    warnings.filterwarnings("ignore")  # the exporter's notes on every model
    torch.manual_seed(0)
    case = models.ALL[name](size)
    path = os.path.join(out, name)
    train, names, args = export_training(case, path + ".train.onnx", exporter)
    case.model.eval()
    onnx_export(case.model, tuple(case.inputs.values()), path + ".infer.onnx", exporter,
                input_names=list(case.inputs), output_names=["output"])
    params = dict(train.named_parameters())
    weights = {n: p.detach().numpy() for n, p in params.items()}
    batch = {n: a.numpy() for n, a in zip(names, args)}
    save_safetensors(path + ".inputs.safetensors", {**weights, **batch})

    # The f64 references: the same weights and batch, in double (the
    # inference output first: the training forward updates the running
    # statistics the inference export holds).
    reference = as_exported(copy.deepcopy(train).double())
    double = tuple(a.double() if a.is_floating_point() else a for a in args)
    with torch.no_grad():
        expected = {"output": reference.model.eval()(*double[:-1]).numpy()}
    loss = reference.train()(*double)
    loss.backward()
    expected["loss"] = loss.detach().numpy()
    expected.update({"grad." + n: p.grad.numpy() for n, p in reference.named_parameters()})
    save_safetensors(path + ".torch.safetensors", expected)
    save_safetensors(path + ".buffers.safetensors",
                     {n: b.numpy() for n, b in train.named_buffers() if b.is_floating_point()})
    with open(path + ".json", "w") as f:
        json.dump({"trainable": list(params), "inputs": names, "exporter": exporter,
                   "torch": torch.__version__,
                   "weight_bytes": sum(a.nbytes for a in weights.values())}, f)
    return case, train


def export_training(case, path, exporter="torchscript"):
    """Exports the model of `case` with its loss, one graph from the inputs
    and the target to the loss, to PATH (TrainingMode.TRAINING: batch norm
    on the batch's statistics); returns (that module, the input names, the
    arguments)."""
    import torch
    import models
    train = models.WithLoss(case.model, case.loss).train()
    names = list(case.inputs) + ["target"]
    args = tuple(case.inputs.values()) + (case.target,)
    training = {
        "default": {},
        "default-training": {"training": torch.onnx.TrainingMode.TRAINING},
        "default-unoptimized": {},
        "torchscript": {"training": torch.onnx.TrainingMode.TRAINING,
                        "do_constant_folding": False}}[exporter]
    onnx_export(train, args, path, exporter, input_names=names, output_names=["loss"],
                **training)
    return train, names, args


def as_exported(model):
    """The model with the epsilons of its norms rounded to f32, as ONNX's
    attributes hold them (the difference shows where a norm divides by
    almost nothing but its epsilon)."""
    for module in model.modules():
        if isinstance(getattr(module, "eps", None), float):
            module.eps = float(np.float32(module.eps))
    return model


def f32_variants(args, device):
    """PyTorch's f32 computations that make the yardstick of kiln's, as
    {key prefix: (device, memory format)}: the model's device in PyTorch's
    default layout (""), channels-last there for image models
    ("channels_last:": other kernels, other summation orders), and the CPU
    ("cpu:") where the device is a GPU.
    Where a ReLU input lies within rounding of zero, or batch norm
    normalises a handful of values, f32 alone lands far from f64 and two f32
    computations far from each other; which of them lands near f64 is luck
    (a ReLU input that rounds to either side of zero), so the spread of
    several, not one of them, is what f32 can be asked for there."""
    import torch
    variants = {"": (device, torch.contiguous_format)}
    if any(a.dim() == 4 and a.is_floating_point() for a in args):
        variants["channels_last:"] = (device, torch.channels_last)
    if device != "cpu":
        variants["cpu:"] = ("cpu", torch.contiguous_format)
    return variants


def in_variant(model, args, device, layout):
    """The model and its inputs moved to DEVICE in LAYOUT (f32)."""
    model = as_exported(copy.deepcopy(model)).to(device).to(memory_format=layout)
    args = tuple((a.to(device).to(memory_format=layout) if a.dim() == 4 else a.to(device))
                 for a in args)
    return model, args


def torch_f32_gradients(train, args, device):
    """PyTorch's own f32 loss and gradients in each of f32_variants, keys
    PREFIX + "loss" and PREFIX + "grad.NAME"."""
    grads = {}
    for prefix, (where, layout) in f32_variants(args, device).items():
        model, inputs = in_variant(train, args, where, layout)
        loss = model(*inputs)
        loss.backward()
        grads[prefix + "loss"] = loss.detach().cpu().numpy()
        grads.update({prefix + "grad." + n: p.grad.cpu().numpy()
                      for n, p in model.named_parameters()})
    return grads


def torch_steps(model, args, optimizer):
    """PyTorch's losses over STEPS steps from the model's weights, in the
    model's own dtype and device (ARGS already there)."""
    import torch
    model = copy.deepcopy(model).train()
    if optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=SGD_LR)
    else:  # kilnc's AdamW defaults are PyTorch's.
        opt = torch.optim.AdamW(model.parameters(), lr=ADAMW_LR)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = model(*args)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


def torch_trajectories(train, args, device, optimizer):
    """{"f64": losses, PREFIX: losses of each f32 variant} over STEPS steps:
    the reference and the spread f32 itself shows from it."""
    reference = as_exported(copy.deepcopy(train)).double().to(device)
    runs = {"f64": torch_steps(reference, tuple(
        a.double() if a.is_floating_point() else a for a in args), optimizer)}
    for prefix, (where, layout) in f32_variants(args, device).items():
        runs[prefix or "f32"] = torch_steps(*in_variant(train, args, where, layout), optimizer)
    return runs


# --- kiln's side ---------------------------------------------------------------

def run_tool(cmd, work):
    """(exit status, seconds, first diagnostic line or None)."""
    start = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if result.returncode == 0:
        return 0, seconds, None
    lines = [l.strip() for l in result.stderr.splitlines() if l.strip()]
    line = next((l for l in lines if "error:" in l), lines[-1] if lines else "")
    line = line.replace(work.rstrip("/") + "/", "")
    if result.returncode != 1:
        line = f"exit status {result.returncode}: {line}"
    return result.returncode, seconds, line


def compile_check(args, name, check, info):
    """Compiles NAME for `check`; (outcome, detail)."""
    limit = args.inference_weight_limit
    if check == "inference" and limit is not None and info["weight_bytes"] > limit:
        mb = info["weight_bytes"] / 2**20
        return (f"skip: {mb:.1f} MiB of weights, above the "
                f"{limit / 2**20:g} MiB limit of inference compiles"), ""
    path = os.path.join(args.work, name)
    model = path + (".infer.onnx" if check == "inference" else ".train.onnx")
    flags = COMPILE_FLAGS[check] + args.kilnc_flags
    if check != "inference":
        flags = [f"--trainable={','.join(info['train'])}"] + flags + args.train_flags
    artifact = f"{path}.{check}.kiln"
    status, seconds, error = run_tool(
        [args.kilnc, model, *flags, "-o", artifact,
         f"--kernel-cache={args.kernel_cache or os.path.join(args.work, 'kernels')}"],
        args.work)
    if status:
        return f"fail: {error}", f"{seconds:.0f} s"
    return "pass", f"{seconds:.0f} s, {os.path.getsize(artifact) / 2**20:.1f} MiB"


def loss_check(args, name, info):
    """kiln-ref's f64 loss at the exported weights against PyTorch's f64
    loss (its eval-mode loss where the exporter wrote an eval-mode graph)."""
    path = os.path.join(args.work, name)
    inputs = load_safetensors(path + ".inputs.safetensors")
    given = info["inputs"] + ([] if info["train"] == ["all"] else info["train"])
    save_safetensors(path + ".loss_inputs.safetensors", {n: inputs[n] for n in given})
    out = path + ".loss.safetensors"
    status, _, error = run_tool(
        [args.kiln_ref, path + ".train.onnx", f"--trainable={','.join(info['train'])}",
         "--function", "loss", "--inputs", path + ".loss_inputs.safetensors",
         "--precision", "f64", "-o", out], args.work)
    if status:
        return f"fail: {error}", ""
    ours = float(load_safetensors(out)["loss"])
    torch_loss = (torch_eval_loss(args, name, info) if info["eval_graph"] else
                  float(load_safetensors(path + ".torch.safetensors")["loss"]))
    rel = abs(ours - torch_loss) / max(abs(torch_loss), 1e-30)
    detail = f"relative difference {rel:.1e}" + (" (eval mode)" if info["eval_graph"] else "")
    if not rel <= LOSS_RTOL:
        return f"fail: loss {ours:.6e}, PyTorch's {torch_loss:.6e}", detail
    return "pass", detail


def torch_eval_loss(args, name, info):
    """PyTorch's f64 loss of NAME in eval mode at the exported weights and
    buffers: the function an eval-mode training graph computes."""
    import torch
    import models
    path = os.path.join(args.work, name)
    inputs = load_safetensors(path + ".inputs.safetensors")
    state = {**{n: inputs[n] for n in info["trainable"]},
             **load_safetensors(path + ".buffers.safetensors")}
    case = models.ALL[name](args.size)
    model = models.WithLoss(case.model, case.loss)
    model.load_state_dict({n: torch.from_numpy(a.copy()) for n, a in state.items()}, strict=False)
    model = as_exported(model).double().eval()
    batch = (torch.from_numpy(inputs[n].copy()) for n in info["inputs"])
    with torch.no_grad():
        return float(model(*(a.double() if a.is_floating_point() else a for a in batch)))


def gradient_check(args, name, info):
    """kiln-ref's f64 gradients at the exported weights against PyTorch's,
    for each of PyTorch's parameters the graph holds unchanged (every one,
    unless the exporter folded some: then those it kept by name and value
    whose values are distinctive, and none of an eval-mode graph, whose
    gradients are not PyTorch's training ones)."""
    path = os.path.join(args.work, name)
    status, _, error = run_tool(
        [args.kilnc, path + ".train.onnx", f"--trainable={','.join(info['train'])}",
         "--train=sgd", *args.kilnc_flags, "--emit=mlir",
         f"--onnx-weights={path}.weights.safetensors",
         "-o", path + ".module.mlir"], args.work)
    if status:
        return f"fail: {error}", ""
    inputs = load_safetensors(path + ".inputs.safetensors")
    weights = load_safetensors(path + ".weights.safetensors")
    folded = info["train"] == ["all"]
    kept = [n for n in info["trainable"]
            if n in weights and np.array_equal(weights[n], inputs[n])]
    if not folded and len(kept) < len(info["trainable"]):
        return f"fail: --onnx-weights: {next(n for n in info['trainable'] if n not in kept)} " \
               "is not PyTorch's", ""
    save_safetensors(path + ".ref_inputs.safetensors",
                     {**weights, **{n: inputs[n] for n in info["inputs"]}})
    out = path + ".gradients.safetensors"
    status, _, error = run_tool(
        [args.kiln_ref, path + ".module.mlir", "--function", "forward_backward", "--inputs",
         path + ".ref_inputs.safetensors", "--precision", "f64", "-o", out], args.work)
    if status:
        return f"fail: {error}", ""
    ours = load_safetensors(out)
    expected = load_safetensors(path + ".torch.safetensors")
    # The exporter also merges initializers of equal values (every layer
    # norm's weight of ones into one): of a folded graph, only parameters
    # whose values no other tensor is likely to share are PyTorch's alone.
    compared = [] if info["eval_graph"] else [
        n for n in kept if not folded or distinctive(n, inputs, info["trainable"])]
    missing = [n for n in compared if "grad." + n not in ours]
    if missing:
        return f"fail: no gradient of {missing[0]}", ""
    # A gradient that is zero up to rounding (a bias whose shift a batch
    # norm's mean removes further on) is compared with a millionth of the
    # whole model's gradient norm instead of its own.
    floor = 1e-6 * np.sqrt(sum(np.sum(expected["grad." + n] ** 2) for n in info["trainable"]))
    worst, bad = (0.0, None), 0
    for n in compared:
        g = expected["grad." + n]
        diff = np.linalg.norm(ours["grad." + n].astype(np.float64) - g)
        rel = diff / max(np.linalg.norm(g), floor, 1e-30) if diff else 0.0
        bad += not rel <= GRADIENT_TOLERANCE
        worst = max(worst, (rel, n), key=lambda w: (w[0], w[1] or ""))
    detail = f"{len(compared)} gradients, worst {worst[0]:.1e} ({worst[1]})"
    if folded:
        detail += (f"; {sum(1 for k in ours if k.startswith('grad.'))} initializers trained, "
                   f"{len(info['trainable']) - len(compared)} of PyTorch's "
                   f"{len(info['trainable'])} parameters not compared")
    if bad:
        return (f"fail: {bad} of {len(compared)} gradients differ; worst "
                f"{worst[1]}: {worst[0]:.2e} of its norm"), detail
    return "pass", detail


def distinctive(name, tensors, names):
    """Whether tensors[name] is neither constant-valued (as a fresh norm's
    ones or a bias's zeros) nor equal to another of `names`."""
    a = tensors[name]
    return (a.size > 1 and not np.all(a == a.flat[0]) and
            not any(m != name and np.array_equal(tensors[m], a) for m in names))


def run_check(args, name, check, info):
    if check == "loss":
        return loss_check(args, name, info)
    if check == "gradients":
        return gradient_check(args, name, info)
    return compile_check(args, name, check, info)


# --- expectations -----------------------------------------------------------

def read_expectations(path):
    expected = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split(" ", 2)
            if len(fields) != 3 or fields[1] not in CHECKS:
                sys.exit(f"{path}:{number}: expected 'MODEL CHECK OUTCOME' with CHECK one of "
                         f"{', '.join(CHECKS)}")
            expected[(fields[0], fields[1])] = fields[2]
    return expected


def same_outcome(actual, expected):
    """Outcomes are the same up to their numbers: a kernel's index or its
    parameter count moves with unrelated changes; the message does not."""
    return NUMBER.sub("#", actual) == NUMBER.sub("#", expected)


def write_expectations(path, outcomes, order):
    """Rewrites PATH with this run's outcomes, keeping its comments and the
    lines of models that did not run (another shard's)."""
    kept = read_expectations(path) if os.path.exists(path) else {}
    kept.update({key: outcome for key, (outcome, _) in outcomes.items()})
    with open(path) as f:
        header = [line for line in f if line.startswith("#")]
    with open(path, "w") as f:
        f.writelines(header)
        for name in order:
            for check_name in CHECKS:
                if (name, check_name) in kept:
                    f.write(f"{name} {check_name} {kept[(name, check_name)]}\n")


def write_table(path, outcomes, infos):
    rows = ["| model | parameters | " + " | ".join(CHECKS) + " |",
            "| --- | --- |" + " --- |" * len(CHECKS)]
    for name, info in infos.items():
        cells = []
        for check in CHECKS:
            outcome, detail = outcomes[(name, check)]
            cells.append(outcome.split(":")[0] + (f" ({detail})" if detail else ""))
        rows.append(f"| {name} | {len(info['trainable'])} tensors, "
                    f"{info['weight_bytes'] / 2**20:.1f} MiB | " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


def write_junit(path, results):
    suite = ElementTree.Element("testsuite", name="zoo", tests=str(len(results)),
                                failures=str(sum(1 for _, f in results if f)))
    for case_name, failure in results:
        case = ElementTree.SubElement(suite, "testcase", name=case_name, classname="zoo",
                                      status="run")
        if failure:
            ElementTree.SubElement(case, "failure", message=failure[:200]).text = failure
    root = ElementTree.Element("testsuites")
    root.append(suite)
    ElementTree.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def obtain(name, args):
    """The exported files of model `name` in args.work: copied from
    args.exported (a folder of `zoo.py export`), or exported here."""
    if not args.exported:
        export(name, args.size, args.work)
        return
    for f in os.listdir(args.exported):
        if f.startswith(name + "."):
            shutil.copy(os.path.join(args.exported, f), args.work)


def graph_facts(args, name, info):
    """What check needs to know of NAME's exported training graph, into
    INFO: "train" (kilnc's --trainable list) and "eval_graph" (True where
    the exporter wrote batch norm in eval mode).
    PyTorch's parameters are the trainable tensors where the graph holds
    them as initializers. PyTorch 2.x's default exporter constant-folds
    whatever the model does to a parameter (a transpose, a split of a fused
    projection, batch norm into the convolution before it, in eval mode even
    for a module in training mode) into the initializers it writes, under
    other names: there every initializer is trained (`all`), which for a
    transpose or a split is PyTorch's training step on other coordinates."""
    import onnx
    import models
    graph = onnx.load(os.path.join(args.work, name + ".train.onnx"),
                      load_external_data=False).graph
    initializers = {i.name for i in graph.initializer}
    kept = all(n in initializers for n in info["trainable"])
    info["train"] = info["trainable"] if kept else ["all"]
    has_norm = any(isinstance(m, torch_batch_norm_types())
                   for m in models.ALL[name](args.size).model.modules())
    info["eval_graph"] = has_norm and not any(n.op_type == "BatchNormalization"
                                              for n in graph.node)


def torch_batch_norm_types():
    import torch
    return (torch.nn.BatchNorm1d, torch.nn.BatchNorm2d, torch.nn.BatchNorm3d)


def model_names(spec):
    """The models `--models` names: every zoo model by default, `extended`
    for the extended set, else the comma-separated names of either."""
    import models
    if not spec:
        return list(models.ZOO)
    names = []
    for name in spec.split(","):
        names += list(models.EXTENDED) if name == "extended" else [name]
    unknown = [n for n in names if n not in models.ALL]
    if unknown:
        sys.exit(f"zoo.py: no model named {', '.join(unknown)} (models: "
                 f"{', '.join(models.ALL)}, or extended)")
    return names


def export_only(args):
    """Exports the models into args.out without checking them (on the GPU
    machine, with its PyTorch's default exporter; check --exported reads
    them here)."""
    import torch
    import models
    names = model_names(args.models)
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    for name in names:
        start = time.monotonic()
        try:
            export(name, args.size, args.out, args.exporter)
        except Exception as e:  # the exporter's own failure, reported per model
            failed += 1
            print(f"{name}: torch {torch.__version__} cannot export it: "
                  f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", flush=True)
            continue
        print(f"exported {name} with torch {torch.__version__} ({args.exporter}, "
              f"{time.monotonic() - start:.1f} s)", flush=True)
    return 1 if failed else 0


def check(args):
    import models
    names = model_names(args.models)
    index, count = (int(v) for v in args.shard.split("/"))
    names = names[index::count]
    os.makedirs(args.work, exist_ok=True)
    args.work = os.path.abspath(args.work)
    infos = {}
    for name in names:
        start = time.monotonic()
        obtain(name, args)
        with open(os.path.join(args.work, name + ".json")) as f:
            infos[name] = json.load(f)
        graph_facts(args, name, infos[name])
        print(f"{'copied' if args.exported else 'exported'} {name} "
              f"({time.monotonic() - start:.1f} s)", flush=True)
    outcomes = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        checks = args.checks.split(",") if args.checks else CHECKS
        jobs = {(n, c): pool.submit(run_check, args, n, c, infos[n])
                for n in names for c in checks}
        for key, job in jobs.items():
            outcomes[key] = job.result()
            print(f"{key[0]} {key[1]}: {outcomes[key][0]}"
                  + (f" [{outcomes[key][1]}]" if outcomes[key][1] else ""), flush=True)
    if args.table:
        write_table(args.table, outcomes, infos)
    if not args.expectations:
        return 0
    if args.update:
        write_expectations(args.expectations, outcomes, list(models.ZOO))
        print(f"wrote {args.expectations}")
        return 0
    expected = read_expectations(args.expectations)
    results = []
    for (name, check_name), (outcome, _) in outcomes.items():
        want = expected.get((name, check_name))
        failure = None
        if want is None:
            failure = f"no expectation for {name} {check_name} (now: {outcome})"
        elif not same_outcome(outcome, want):
            failure = f"expected '{want}', got '{outcome}'"
            if outcome == "pass":
                failure = f"now passes (expected '{want}'): update {args.expectations}"
        results.append((f"{name}:{check_name}", failure))
    failed = [f"{case}: {failure}" for case, failure in results if failure]
    for line in failed:
        print("UNEXPECTED " + line)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if args.junit:
        write_junit(args.junit, results)
    return 1 if failed else 0


# --- the GPU bundle ------------------------------------------------------------

def bundle(args):
    """Writes the GPU check of every model into args.out: its artifacts (an
    inference artifact, which carries the weights, only where they are
    within the limit; training artifacts without them), the
    batch, PyTorch's f64 inference output, the module's buffers and the
    digests of the exported weights. The weights themselves are not carried:
    gpu-reference makes them again there from the same seed (and says so
    where that PyTorch's initialisation gives other values)."""
    import models
    names = model_names(args.models)
    os.makedirs(args.out, exist_ok=True)
    args.work = os.path.abspath(os.path.join(args.out, "work"))
    os.makedirs(args.work, exist_ok=True)
    manifest = []
    for name in names:
        obtain(name, args)
        work, out = os.path.join(args.work, name), os.path.join(args.out, name)
        with open(work + ".json") as f:
            info = json.load(f)
        graph_facts(args, name, info)
        inputs = load_safetensors(work + ".inputs.safetensors")
        info["size"] = args.size
        info["digests"] = {n: hashlib.sha256(inputs[n].tobytes()).hexdigest()
                           for n in info["trainable"]}
        with open(out + ".json", "w") as f:
            json.dump(info, f, indent=1)
        save_safetensors(out + ".batch.safetensors", {n: inputs[n] for n in info["inputs"]})
        save_safetensors(out + ".infer_inputs.safetensors",
                         {n: inputs[n] for n in info["inputs"][:-1]})
        shutil.copy(work + ".buffers.safetensors", out + ".buffers.safetensors")
        output = load_safetensors(work + ".torch.safetensors")["output"]
        save_safetensors(out + ".expected_output.safetensors",
                         {"output": output.astype(np.float32)})
        for mode in ("inference", "f32_sgd", "f32_adamw"):
            outcome, detail = compile_check(args, name, mode, info)
            if outcome == "pass":
                os.replace(f"{work}.{mode}.kiln", f"{out}.{mode}.kiln")
            manifest.append(f"{name} {mode} {outcome}" + (f" [{detail}]" if detail else ""))
            print(manifest[-1], flush=True)
    with open(os.path.join(args.out, "MANIFEST"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    with open(os.path.join(args.out, "MODELS"), "w") as f:
        f.write("\n".join(names) + "\n")
    return 0


def gpu_reference(args):
    """On the GPU machine: the model again under the export's seed with the
    exported buffers, its weights and the batch as kiln-run's inputs
    (NAME.run_inputs.safetensors), PyTorch's f64 loss and gradients
    (NAME.expected_gradients.safetensors), its f32 ones
    (NAME.torch_f32_gradients.safetensors, torch_f32_gradients)
    and its f64 and f32 losses over STEPS SGD and AdamW steps, TF32 off
    (NAME.torch_{sgd,adamw}_losses.txt: a column per run, torch_trajectories)."""
    import torch
    import models
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    path = os.path.join(args.bundle, args.model)
    with open(path + ".json") as f:
        info = json.load(f)
    torch.manual_seed(0)
    case = models.ALL[args.model](info["size"])
    train = models.WithLoss(case.model, case.loss).train()
    buffers = load_safetensors(path + ".buffers.safetensors")
    train.load_state_dict({n: torch.from_numpy(a.copy()) for n, a in buffers.items()},
                          strict=False)
    weights = {n: p.detach().numpy() for n, p in train.named_parameters()}
    differ = [n for n in info["trainable"]
              if hashlib.sha256(weights[n].tobytes()).hexdigest() != info["digests"][n]]
    print(f"{args.model}: PyTorch {torch.__version__} on {device}; weights: "
          + (f"its own initialisation, which differs from the exported weights in "
             f"{len(differ)} of {len(weights)} tensors (first {differ[0]})" if differ else
             "the exported ones"))
    batch = load_safetensors(path + ".batch.safetensors")
    save_safetensors(path + ".run_inputs.safetensors", {**weights, **batch})
    args_f32 = tuple(torch.from_numpy(batch[n].copy()).to(device) for n in info["inputs"])
    reference = as_exported(copy.deepcopy(train)).double().to(device)
    loss = reference(*(a.double() if a.is_floating_point() else a for a in args_f32))
    loss.backward()
    expected = {"loss": loss.detach().cpu().numpy(),
                **{"grad." + n: p.grad.cpu().numpy() for n, p in reference.named_parameters()}}
    f32 = torch_f32_gradients(train, args_f32, device)
    save_safetensors(path + ".expected_gradients.safetensors", expected)
    save_safetensors(path + ".torch_f32_gradients.safetensors", f32)
    errors = gradient_errors(expected, f32)
    largest = max(m for _, m in errors.values())
    worst = sorted(errors.items(), key=lambda kv: -relative(*kv[1], largest))[:5]
    print("PyTorch's f32 gradients from f64, worst of their largest magnitude: "
          + ", ".join(f"{n} {relative(e, m, largest):.2e}" for n, (e, m) in worst))
    for optimizer in ("sgd", "adamw"):
        runs = torch_trajectories(train, args_f32, device, optimizer)
        with open(f"{path}.torch_{optimizer}_losses.txt", "w") as f:
            f.write("step " + " ".join(runs) + "\n")
            for step, losses in enumerate(zip(*runs.values()), start=1):
                f.write(f"{step} " + " ".join(f"{v:.17g}" for v in losses) + "\n")
    return 0


def gradient_errors(expected, other):
    """{name: (largest |other - expected|, largest |expected|)} over the
    gradients of `expected` (f64); where `other` holds several computations
    of a gradient (torch_f32_gradients), the largest error of any."""
    def error(n, g):
        return max(float(np.max(np.abs(v.astype(np.float64) - g), initial=0.0))
                   for k, v in other.items() if k == n or k.endswith(":" + n))
    return {n: (error(n, g), float(np.max(np.abs(g), initial=0.0))) for n, g in expected.items()}


def relative(error, largest_here, largest_anywhere):
    """An error relative to its tensor's largest magnitude, or to a millionth
    of the model's largest where the tensor is zero up to rounding."""
    return error / max(largest_here, 1e-6 * largest_anywhere, 1e-30)


def tolerance(name, largest_here, largest_anywhere, torch_error):
    """compare-gradients' bound on kiln's largest error in one tensor."""
    bound = LOSS_RTOL if name == "loss" else GRADIENT_TOLERANCE
    return max(bound * largest_here, 1e-6 * largest_anywhere, F32_ERROR_RATIO * torch_error)


def compare_gradients(args):
    """kiln's f32 gradients (kiln-run --output), or with --what loss its
    loss, against PyTorch's f64 ones, calibrated by PyTorch's own f32 on the
    same machine: a tensor passes where kiln's largest error is within
    GRADIENT_TOLERANCE (the loss: LOSS_RTOL) of the tensor's largest
    magnitude, within a millionth of the model's largest gradient (a gradient that is zero up to rounding, as a bias whose shift
    a later normalisation removes), or within F32_ERROR_RATIO times
    PyTorch's f32 error (an ill-conditioned reduction, as batch norm over
    eight values a channel, where f32 alone cannot do better)."""
    expected = {n: g for n, g in load_safetensors(args.expected).items()
                if (n == "loss") == (args.what == "loss")}
    kiln_out, torch_f32 = load_safetensors(args.kiln), load_safetensors(args.torch_f32)
    missing = [n for n in expected if n not in kiln_out]
    if missing:
        print(f"kiln's output has no {missing[0]} ({len(missing)} missing)")
        return 1
    ours, theirs = gradient_errors(expected, kiln_out), gradient_errors(expected, torch_f32)
    largest = max(m for _, m in ours.values())
    rows = []
    for n, (e, m) in ours.items():
        bound = tolerance(n, m, largest, theirs[n][0])
        rows.append((e / bound if bound else (0.0 if e == 0 else float("inf")),
                     n, e, m, theirs[n][0]))
    rows.sort(reverse=True)
    bad = [r for r in rows if not r[0] <= 1.0]
    print("tensor  kiln-f64  PyTorch-f32-f64  largest |f64|  (errors: largest absolute)")
    for ratio, n, e, m, t in (bad or rows[:5]):
        print(f"{n} {e:.3e} {t:.3e} {m:.3e}" + ("  above tolerance" if ratio > 1 else ""))
    worst = max(rows, key=lambda r: relative(r[2], r[3], largest))
    summary = (f"{args.what}: {len(rows)} tensor(s); worst kiln error "
               f"{relative(worst[2], worst[3], largest):.2e} of its largest ({worst[1]}; "
               f"PyTorch f32 {relative(worst[4], worst[3], largest):.2e})")
    for _, n, *_ in bad[:3]:  # where the worst tensors differ
        diff = np.abs(kiln_out[n].astype(np.float64) - expected[n]).ravel()
        for i in np.argsort(-diff)[:4]:
            index = np.unravel_index(i, expected[n].shape)
            print(f"  {n}{list(index)}: kiln {kiln_out[n][index]:.6e}, PyTorch f32 "
                  f"{torch_f32[n][index]:.6e}, f64 {expected[n][index]:.6e}")
    print(f"{summary}; {len(bad)} above tolerance" if bad else f"{summary}; all within tolerance")
    return 1 if bad else 0


def read_trajectories(path):
    """{run: [loss per step]} of a NAME.torch_{sgd,adamw}_losses.txt table."""
    with open(path) as f:
        header, *rows = [line.split() for line in f if line.strip()]
    return {run: [float(row[i]) for row in rows] for i, run in enumerate(header) if i}


def compare_steps(args):
    """kiln's losses over the steps of kiln-run's log against PyTorch's f64
    ones. The bound at a step is the larger of --rtol and F32_ERROR_RATIO
    times the largest relative distance any of PyTorch's f32 runs has
    reached from f64 by then: training a memorised batch through batch
    norm amplifies rounding from step to step, and how far f32 may drift
    is what PyTorch's own f32 shows, not a fixed bound. A wrong gradient
    or update shows in the first steps, before any drift."""
    runs = read_trajectories(args.torch_losses)
    reference = runs.pop("f64")
    kiln = {}
    with open(args.kiln_log) as f:
        for line in f:
            m = re.search(r"step (\d+)/\d+\s+loss (\S+)", line)
            if m:
                kiln[int(m.group(1))] = float(m.group(2))
    drift, worst, first_bad = 0.0, 0.0, None
    print("step  f64  kiln  kiln-f64  PyTorch-f32-f64 (largest so far)  bound  (relative)")
    for step, expected in enumerate(reference, start=1):
        scale = max(abs(expected), 1e-30)
        drift = max([drift] + [abs(r[step - 1] - expected) / scale for r in runs.values()])
        bound = max(args.rtol, F32_ERROR_RATIO * drift)
        ours = kiln.get(step, float("nan"))
        rel = abs(ours - expected) / scale
        print(f"{step} {expected:.7g} {ours:.7g} {rel:.2e} {drift:.2e} {bound:.2e}"
              + ("" if rel <= bound else "  above"))
        worst = max(worst, rel / bound) if rel == rel else float("inf")
        if first_bad is None and not rel <= bound:
            first_bad = step
    print(f"largest difference {worst:.2f} of its bound; "
          + (f"above it from step {first_bad}" if first_bad else "every step within it"))
    return 1 if first_bad else 0


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("check", "bundle"):
        p = sub.add_parser(command)
        p.add_argument("--kilnc", required=True)
        p.add_argument("--models", help="comma-separated (default: the zoo's; "
                       "`extended`: the extended set)")
        p.add_argument("--kernel-cache", help="kilnc's kernel cache (check: WORK/kernels; "
                       "bundle: kilnc's default)")
        p.add_argument("--inference-weight-limit", type=float,
                       default=None if command == "check" else 16 * 2**20,
                       help="bytes of weights above which inference compiles are skipped")
        p.add_argument("--exported", help="a folder of `zoo.py export`: its models are "
                       "used instead of exporting them here")
        p.add_argument("--kilnc-flag", dest="kilnc_flags", action="append", default=[],
                       help="one more flag of every kilnc call (repeatable), e.g. "
                       "--kilnc-flag=--layout=channels-last")
        # The bundle's training artifacts leave the weights to the inputs.
        p.set_defaults(train_flags=[] if command == "check" else ["--fresh-params"])
    p_check, p_bundle = sub.choices["check"], sub.choices["bundle"]
    p_check.add_argument("--kiln-ref", required=True)
    p_check.add_argument("--work", required=True)
    p_check.add_argument("--size", choices=["ci", "full"], default="ci")
    p_check.add_argument("--expectations")
    p_check.add_argument("--update", action="store_true")
    p_check.add_argument("--checks", help=f"comma-separated of {','.join(CHECKS)} (default: all)")
    p_check.add_argument("--jobs", type=int, default=2)
    p_check.add_argument("--shard", default="0/1", help="I/N: every Nth model from the Ith")
    p_check.add_argument("--junit")
    p_check.add_argument("--table")

    p_bundle.add_argument("--out", required=True)
    p_bundle.set_defaults(kernel_cache=os.path.expanduser("~/.cache/kiln/kernels"))
    p_bundle.add_argument("--size", choices=["ci", "full"], default="full")
    p = sub.add_parser("export")
    p.add_argument("--out", required=True)
    p.add_argument("--models", help="comma-separated (default: the zoo's; "
                   "`extended`: the extended set)")
    p.add_argument("--size", choices=["ci", "full"], default="ci")
    p.add_argument("--exporter", choices=["torchscript", "default", "default-training",
                                                 "default-unoptimized"],
                   default="default")
    p = sub.add_parser("compare-steps")
    p.add_argument("torch_losses")
    p.add_argument("kiln_log")
    p.add_argument("--rtol", type=float, default=1e-3)
    p = sub.add_parser("compare-gradients")
    p.add_argument("expected", help="PyTorch's f64 gradients")
    p.add_argument("torch_f32", help="PyTorch's f32 gradients")
    p.add_argument("kiln", help="kiln-run --output of forward_backward")
    p.add_argument("--what", choices=["gradients", "loss"], default="gradients")
    p = sub.add_parser("gpu-reference")
    p.add_argument("bundle")
    p.add_argument("model")
    args = parser.parse_args()
    return {"check": check, "bundle": bundle, "export": export_only, "compare-steps": compare_steps,
            "compare-gradients": compare_gradients, "gpu-reference": gpu_reference}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
