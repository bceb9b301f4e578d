"""kiln-ref's runs of one graph, made by one process (kiln-ref --batch).

Starting kiln-ref (loading LLVM's and MLIR's shared libraries) costs more
than evaluating a generated graph, and a graph's check needs a dozen
evaluations: they are queued with add() and made together by run(); each
then has its outputs {name: array} or its error text, as a run of its own
would give. A kiln-ref that crashes or hangs is asked again one run at a
time, so that the run at fault is named.
"""
import os

import tensors
from process import first_line, run

FAILED = "kiln-ref: batch line "


class RefBatch:
    def __init__(self, kiln_ref, work):
        self.kiln_ref, self.work = kiln_ref, work
        self.queued = []  # (tag, module path, function, precision, inputs file, outputs file)
        self.results = {}

    def add(self, tag, module_path, function, inputs, precision):
        """Queues `function` of the module on `inputs` ({name: (dtype,
        array)}) in `precision` (f32 or f64) under `tag`."""
        inp = os.path.join(self.work, f"{tag}.in.safetensors")
        out = os.path.join(self.work, f"{tag}.out.safetensors")
        tensors.save(inp, inputs)
        if os.path.exists(out):
            os.remove(out)
        self.queued.append((tag, module_path, function, precision, inp, out))

    def run(self):
        """Makes the queued runs."""
        if not self.queued:
            return
        path = os.path.join(self.work, "runs.tsv")
        with open(path, "w") as f:
            for _, module_path, function, precision, inp, out in self.queued:
                f.write("\t".join((module_path, function, precision, inp, out)) + "\n")
        status, _, stderr = run([self.kiln_ref, "--batch", path])
        if status in (0, 1):
            errors = failed_runs(stderr)
            for line, (tag, _, function, precision, _, out) in enumerate(self.queued, 1):
                self.results[tag] = (outputs(out) if line not in errors else
                                     f"kiln-ref {function} ({precision}) exit 1: {first_line(errors[line])}")
        else:
            for tag, module_path, function, precision, inp, out in self.queued:
                self.results[tag] = run_one(self.kiln_ref, module_path, function, precision, inp, out)
        self.queued = []

    def __getitem__(self, tag):
        return self.results[tag]


def failed_runs(stderr):
    """{line of the batch file: its errors} from kiln-ref --batch's stderr,
    where each failed run's errors end with "kiln-ref: batch line N
    failed"."""
    errors, pending = {}, []
    for line in stderr.splitlines():
        if line.startswith(FAILED) and line.endswith(" failed"):
            errors[int(line[len(FAILED):-len(" failed")])] = "\n".join(pending)
            pending = []
        else:
            pending.append(line)
    return errors


def outputs(path):
    if not os.path.exists(path):
        return f"kiln-ref succeeded but wrote no {path}"
    return tensors.load(path)


def run_one(kiln_ref, module_path, function, precision, inp, out):
    status, _, stderr = run([kiln_ref, module_path, "--function", function, "--inputs", inp,
                             "--precision", precision, "-o", out])
    if status != 0:
        return f"kiln-ref {function} ({precision}) exit {status}: {first_line(stderr)}"
    return outputs(out)


def evaluate(kiln_ref, module_path, function, inputs, precision, work, tag):
    """One run's outputs {name: array}, or its error text."""
    batch = RefBatch(kiln_ref, work)
    batch.add(tag, module_path, function, inputs, precision)
    batch.run()
    return batch[tag]
