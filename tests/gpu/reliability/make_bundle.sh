#!/bin/bash
# Builds, on this machine, the GPU check of long and faulty training runs
# into DIR (default .gpu-bundle/reliability):
#  - the MLP compiled for AdamW with non-finite updates skipped, and its
#    regression dataset: a 100,000-step soak and a run through NaN batches;
#  - the sine block in f16 with dynamic loss scaling;
#  - a wide linear regression whose dataset (written on the GPU machine by
#    make_dataset, larger than this machine's memory) is streamed once;
#  - kiln-run and make_dataset (static binaries that run there).
# Then, on the GPU machine: DIR/run.sh LOGDIR.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/reliability}"
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tools/kilnc //tools/kiln-run //samples:make_dataset >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
# The binaries that run there optimised: the host side of a step (launches,
# batch copies, the data's checksums) is what a soak and a stream measure.
bazel build -c opt //tools/kiln-run //samples:make_dataset >/dev/null
opt_bin="$(bazel info -c opt bazel-bin 2>/dev/null)"

"${kilnc}" samples/mlp.mlir --train=adamw --nonfinite-grads=skip \
  -o "${out}/mlp_skip.kiln"
"${kilnc}" samples/sine_block.mlir --train=adamw --beta2=0.99 --clip-norm=1 \
  --precision=f16 --loss-scale=dynamic --loss-scale-growth-interval=200 \
  -o "${out}/sine_block_f16.kiln"
"${kilnc}" tests/gpu/reliability/wide_regression.mlir --train=adamw \
  -o "${out}/wide_regression.kiln"
# 1000 batches of 64 a pass; 4000 sine sequences.
"${opt_bin}/samples/make_dataset" --task regression --records 64000 --seed 5 \
  --out "${out}/regression.kilndata"
"${opt_bin}/samples/make_dataset" --task sine --records 4000 --seed 5 \
  --out "${out}/sine.kilndata"
# One batch of the MLP's inputs with a NaN and an infinity in it.
python3 - "${out}/nan_batch.safetensors" <<'PY'
import random, sys
sys.path.insert(0, "tests/gpu/codegen")
import safetensors_lite as st
rng = random.Random(7)
x = [rng.uniform(-1, 1) for _ in range(64 * 8)]
x[17], x[300] = float("nan"), float("inf")
y = [rng.uniform(-1, 1) for _ in range(64)]
st.save(sys.argv[1], {"x": ("F32", [64, 8], x), "y": ("F32", [64, 1], y)})
PY
cp "${opt_bin}/tools/kiln-run/kiln-run" "${opt_bin}/samples/make_dataset" "${out}/"
cp tests/gpu/codegen/safetensors_lite.py tests/gpu/reliability/run.sh tests/gpu/sanitized.sh \
  tests/gpu/reliability/check_soak.py tests/gpu/reliability/check_skipped.py \
  "${out}/"
git rev-parse HEAD >"${out}/COMMIT" 2>/dev/null || true
echo "bundle in ${out}"
