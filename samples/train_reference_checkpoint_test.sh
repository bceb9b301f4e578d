#!/bin/bash
# train_reference's checkpoints are kiln-run's: a run stopped and resumed
# ends with the same bytes as one straight through (f32 and bf16 storage);
# kiln-run, against the CPU stand-in driver, restores train_reference's
# checkpoint into the compiled model (Trainer::Restore, the reader of
# --resume) and saves it back unchanged; a checkpoint that does not fit the
# model is an error naming the tensor, in both; bad command lines exit 2.
#   train_reference_checkpoint_test.sh TRAIN_REFERENCE KILNC KILN_RUN
#                                      FAKE_LIBCUDA MODEL
set -uo pipefail
train_reference="$(realpath "$1")" kilnc="$(realpath "$2")"
kiln_run="$(realpath "$3")" fake_libcuda="$(realpath "$4")"
model="$(realpath "$5")"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/checkpoint.XXXXXX")"
cd "${work}" || exit 1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
# expect <status> <text> <command...>: exit status and a line of the output.
expect() {
  local want="$1" text="$2"
  shift 2
  "$@" >out.txt 2>&1
  local got=$?
  if [[ ${got} -ne ${want} ]] || ! grep -qF -- "${text}" out.txt; then
    fail "$*: exit ${got} (expected ${want}), output lacks '${text}':"
    sed 's/^/    /' out.txt
  else
    echo "ok   $*"
  fi
}
same() {  # same <a> <b>: the files are equal byte for byte
  if cmp -s "$1" "$2"; then echo "ok   $1 == $2"; else fail "$1 != $2"; fi
}
train() { "${train_reference}" --model "${model}" --task regression --seed 3 "$@"; }

for precision in f32 bf16; do
  expect 0 "wrote checkpoint full.${precision} (step 8)" \
    train --precision "${precision}" --steps 8 --checkpoint "full.${precision}"
  expect 0 "wrote checkpoint half.${precision} (step 4)" \
    train --precision "${precision}" --steps 4 --schedule-steps 8 \
    --checkpoint "half.${precision}"
  expect 0 "resumed from half.${precision} at step 4" \
    train --precision "${precision}" --steps 8 --resume "half.${precision}" \
    --checkpoint "resumed.${precision}"
  same "full.${precision}" "resumed.${precision}"
done

# Every --checkpoint-every steps, and at the end.
expect 0 "wrote checkpoint every (step 3)" \
  train --steps 8 --checkpoint-every 3 --checkpoint every
for step in 6 8; do
  grep -qF "wrote checkpoint every (step ${step})" out.txt ||
    fail "no checkpoint at step ${step}"
done
same full.f32 every
# Nothing left to train: the checkpoint is written back as it was.
expect 0 "resumed from full.f32 at step 8" \
  train --steps 8 --resume full.f32 --checkpoint again
same full.f32 again
expect 1 "--steps 5 is below the checkpoint's step 8" \
  train --steps 5 --resume full.f32

# kiln-run reads and writes the same file (its Trainer, on the stand-in
# driver: restore and save, no step left to run).
"${kilnc}" "${model}" --train=adamw --beta2=0.99 --weight-decay=0 \
  --clip-norm=1 --kernel-cache "${work}/kernels" -o mlp.kiln || fail kilnc
/usr/bin/python3 - <<'PY'
import json, struct
def write(path, tensors):
    header, data = {}, b""
    for name, (shape, values) in tensors.items():
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)
write("batch.safetensors",
      {"x": ([64, 8], [((i * 37) % 17) / 17 - 0.5 for i in range(512)]),
       "y": ([64, 1], [((i * 11) % 7) / 7 for i in range(64)])})
PY
export KILN_LIBCUDA_PATH="${fake_libcuda}"
expect 0 "resumed from full.f32 at step 8" \
  "${kiln_run}" mlp.kiln --resume full.f32 --steps 8 \
  --inputs batch.safetensors --checkpoint by_kiln_run
same full.f32 by_kiln_run

# Checkpoints that do not fit: a tensor missing, a shape or a dtype changed.
/usr/bin/python3 - <<'PY'
import json, struct
def read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = {k: v for k, v in header.pop("__metadata__").items()
            if not k.startswith("kiln.fnv1a64.")}
    return meta, {k: (v["dtype"], v["shape"], b[8 + n + v["data_offsets"][0]:
                                               8 + n + v["data_offsets"][1]])
                  for k, v in header.items()}
def write(path, meta, tensors):
    header, data = {"__metadata__": meta}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)
meta, tensors = read("full.f32")
missing = dict(tensors); del missing["adam_v.w1"]
write("missing", meta, missing)
reshaped = dict(tensors); reshaped["b2"] = ("F32", [2], tensors["b2"][2] * 2)
write("reshaped", meta, reshaped)
PY
for run in train_reference kiln_run; do
  if [[ ${run} == train_reference ]]; then
    resume() { train --steps 8 --resume "$1"; }
  else
    resume() {
      "${kiln_run}" mlp.kiln --steps 8 --inputs batch.safetensors --resume "$1"
    }
  fi
  expect 1 "missing: no tensor 'adam_v.w1'" resume missing
  expect 1 "reshaped: tensor 'b2' is f32[2] but the model's is f32[1]" \
    resume reshaped
  # The first tensor the reader checks is each one's own.
  expect 1 "full.bf16: tensor '" resume full.bf16
  grep -qE "is bf16\[[0-9,]+\] but the model's is f32\[" out.txt ||
    fail "${run}: no dtype mismatch for full.bf16"
done
unset KILN_LIBCUDA_PATH

# Bad command lines: exit status 2, before anything is read.
expect 2 "--checkpoint-every needs --checkpoint" train --checkpoint-every 2
expect 2 "--precision=f64 does not round to" \
  train --precision f64 --checkpoint x
expect 2 "--schedule-steps must be >= --steps" \
  train --steps 8 --schedule-steps 4
expect 2 "--beta1 must be in [0, 1)" train --beta1 1
expect 2 "--lr must be > 0" train --lr 0
expect 2 "--task draws batches; --dataset reads them: give one" \
  train --dataset d.kilndata
expect 2 "--heldout needs --dataset" train --heldout h.kilndata
expect 2 "unknown option '--params': start from a checkpoint with --resume" \
  train --params p
expect 0 "--resume PATH" "${train_reference}" --help
expect 0 "train_reference 0." "${train_reference}" --version

[[ ${failures} -eq 0 ]] || { echo "${failures} failed"; exit 1; }
