"""kiln-ref's runs of one graph, made by one process (kiln-ref --batch).

Starting kiln-ref (loading LLVM's and MLIR's shared libraries) costs more
than evaluating a generated graph, and a graph's check needs a dozen
evaluations: they are queued with add() and made together by run(); each
then has its outputs {name: array} or its error text, as a run of its own
would give. When kiln-ref crashes or hangs, the run it was making (the
first with neither outputs nor errors) gets the crash or the time-out, and
the runs after it go to a new kiln-ref.
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
        queued, self.queued = self.queued, []
        while queued:
            queued = self.run_some(queued)

    def run_some(self, queued):
        """Makes `queued` with one kiln-ref; returns those after the run it
        crashed or hung in."""
        path = os.path.join(self.work, "runs.tsv")
        with open(path, "w") as f:
            for _, module_path, function, precision, inp, out in queued:
                f.write("\t".join((module_path, function, precision, inp, out)) + "\n")
        status, _, stderr = run([self.kiln_ref, "--batch", path])
        errors, last = failed_runs(stderr)
        for line, (tag, _, function, precision, _, out) in enumerate(queued, 1):
            if line in errors:
                self.results[tag] = f"kiln-ref {function} ({precision}) exit 1: {first_line(errors[line])}"
            elif os.path.exists(out):
                self.results[tag] = tensors.load(out)
            elif status in (0, 1):
                self.results[tag] = f"kiln-ref {function} ({precision}) succeeded but wrote no {out}"
            else:
                self.results[tag] = crashed(status, function, precision, last)
                return queued[line:]
        if status not in (0, 1):  # After its last run: that run's finding.
            tag, _, function, precision, _, _ = queued[-1]
            self.results[tag] = crashed(status, function, precision, last)
        return []

    def __getitem__(self, tag):
        return self.results[tag]


def failed_runs(stderr):
    """({line of the batch file: its errors}, what follows the last failed
    run's) from kiln-ref --batch's stderr, where each failed run's errors
    end with "kiln-ref: batch line N failed"."""
    errors, pending = {}, []
    for line in stderr.splitlines():
        if line.startswith(FAILED) and line.endswith(" failed"):
            errors[int(line[len(FAILED):-len(" failed")])] = "\n".join(pending)
            pending = []
        else:
            pending.append(line)
    return errors, "\n".join(pending)


def crashed(status, function, precision, stderr):
    kind = "timed out" if status is None else f"exit {status}"
    return f"kiln-ref {function} ({precision}) {kind}: {first_line(stderr)}"


def evaluate(kiln_ref, module_path, function, inputs, precision, work, tag):
    """One run's outputs {name: array}, or its error text."""
    batch = RefBatch(kiln_ref, work)
    batch.add(tag, module_path, function, inputs, precision)
    batch.run()
    return batch[tag]
