#!/bin/bash
# Builds, on this machine, the GPU check of user kernels (kiln.custom) into
# DIR (default .gpu-bundle/custom), from the sample samples/custom/:
#  - grad_check.kiln: the user's forward and backward kernels as one
#    inference entry, for check_custom.py's central differences;
#  - custom_sgd.kiln, the sample compiled for training (f32 SGD), with
#    random parameters and a batch drawn under SEED and the f64 loss and
#    gradients of the same model written in kiln ops (model_reference.mlir,
#    kiln-ref), so the gradients that reach the parameters through
#    autodiff and the user's backward are checked too;
#  - custom_adamw.kiln and custom_adamw_bf16.kiln (f32 and bf16 AdamW) and a
#    regression data (training and held-out), for short training runs that
#    must lower the held-out loss;
#  - kiln-run (a static binary that runs there).
# Then, on the GPU machine: DIR/run.sh LOGDIR.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/custom}"
seed="${SEED:-$RANDOM}"
rm -rf "${out}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run //samples:make_dataset >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

"${kilnc}" tests/gpu/custom/grad_check.mlir --inference --function f -I samples/custom \
  -o "${out}/grad_check.kiln" --stats 2>"${out}/grad_check.stats"
"${kilnc}" samples/custom/model.mlir --train=sgd -o "${out}/custom_sgd.kiln" \
  --stats 2>"${out}/custom_sgd.stats"
"${kilnc}" samples/custom/model.mlir --train=adamw -o "${out}/custom_adamw.kiln"
"${kilnc}" samples/custom/model.mlir --train=adamw --precision=bf16 \
  -o "${out}/custom_adamw_bf16.kiln"

# The reference: the same model in kiln ops, its training step as kilnc
# builds it, on arguments drawn under the seed.
"${kilnc}" tests/gpu/custom/model_reference.mlir --train=sgd --emit=mlir -o "${tmp}/reference.mlir"
"${bin}/tools/kiln-ref/kiln-ref" "${tmp}/reference.mlir" --function forward_backward \
  --random-seed "${seed}" --precision f64 --save-inputs "${tmp}/drawn.safetensors" \
  -o "${out}/custom_sgd.expected.safetensors"
cp tests/ops/split_inputs.py tests/gpu/codegen/safetensors_lite.py "${tmp}/"
(cd "${tmp}" && python3 split_inputs.py reference.mlir forward_backward drawn.safetensors \
  "${out}/custom_sgd.params.safetensors" "${out}/custom_sgd.inputs.safetensors")

"${bin}/samples/make_dataset" --task regression --records 32000 --seed 7 \
  --out "${out}/regression.kilndata"
"${bin}/samples/make_dataset" --task regression --records 6400 --seed 8 \
  --out "${out}/heldout.kilndata"
echo "${seed}" >"${out}/SEED"
cp "${bin}/tools/kiln-run/kiln-run" tests/gpu/custom/run.sh tests/gpu/custom/check_custom.py \
  tests/gpu/codegen/safetensors_lite.py tests/gpu/sanitized.sh "${out}/"
for file in params inputs expected; do
  [[ -s "${out}/custom_sgd.${file}.safetensors" ]] || { echo "make_bundle: no ${file} file" >&2; exit 1; }
done
echo "bundle in ${out} (seed ${seed})"
