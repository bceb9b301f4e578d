#!/usr/bin/env python3
"""Prepares one optimizer-update check of a compiled training step.

    make_update_case.py DRAWN.safetensors STEP LR OUTPREFIX

DRAWN holds every argument of train_step as kiln-ref drew them (uniform in
[-1, 1)). This writes
  OUTPREFIX.inputs.safetensors  the arguments kiln-ref runs train_step on: the
                                drawn ones, with second-moment state made
                                non-negative (|v|), lr = LR and step = STEP;
  OUTPREFIX.resume.safetensors  the same parameters, master weights and
                                optimizer state as a kiln checkpoint at update
                                count STEP - 1, for kiln-run --resume;
  OUTPREFIX.batch.safetensors   the batch (x, y) for kiln-run --inputs;
  OUTPREFIX.run                 "STEP LR": kiln-run's --steps and --lr.
Non-zero state and a late step make every term of the update matter (bias
correction, momentum, decay), unlike a first step from zeros."""
import sys

import safetensors_lite as st

RESIDENT_PREFIXES = ("adam_m.", "adam_v.", "momentum.", "master.")


def main():
    drawn, step, lr, prefix = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    tensors, _ = st.load(drawn)
    inputs, resume, batch = {}, {}, {}
    for name, (dtype, shape, values) in tensors.items():
        if name.startswith("adam_v."):
            values = [abs(v) for v in values]
        if name == "lr":
            values = [lr]
        elif name == "step":
            values = [step]
        inputs[name] = (dtype, shape, values)
        if name in ("x", "y"):
            batch[name] = (dtype, shape, values)
        elif name not in ("lr", "step"):
            resume[name] = (dtype, shape, values)
    st.save(f"{prefix}.inputs.safetensors", inputs)
    st.save(f"{prefix}.resume.safetensors", resume,
            {"format": "kiln", "step": str(step - 1)})
    st.save(f"{prefix}.batch.safetensors", batch)
    with open(f"{prefix}.run", "w") as f:
        f.write(f"{step} {lr!r}\n")


if __name__ == "__main__":
    main()
