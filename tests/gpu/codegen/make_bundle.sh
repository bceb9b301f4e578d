#!/bin/bash
# Builds, on this machine, the GPU check of kilnc's generated kernels and of
# training on the GPU, into DIR (default .gpu-bundle/codegen):
#  - for every model in tests/gpu/codegen: its artifact (kilnc --inference),
#    fresh random inputs and the f64 reference outputs (kiln-ref);
#  - the sine block and the MLP compiled for training (kilnc);
#  - kiln-run and train_gpu (static binaries that run there).
# Then, on the GPU machine: DIR/run.sh LOGDIR.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/codegen}"
seed="${SEED:-$RANDOM}"
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run //samples:train_gpu >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"

for model in tests/gpu/codegen/*.mlir; do
  name="$(basename "${model}" .mlir)"
  "${bin}/tools/kilnc/kilnc" --inference --function f "${model}" \
    -o "${out}/${name}.kiln" --stats 2>"${out}/${name}.stats"
  "${bin}/tools/kiln-ref/kiln-ref" "${model}" --fn f --random-seed "${seed}" \
    --precision f64 --save-inputs "${out}/${name}.inputs.safetensors" \
    -o "${out}/${name}.expected.safetensors"
done
# The optimizer settings of the CPU reference trainer's defaults
# (samples/train_reference.cpp), so GPU and CPU runs are comparable.
train_flags=(--train=adamw --beta2=0.99 --weight-decay=0 --clip-norm=1)
for sample in sine_block mlp; do
  "${bin}/tools/kilnc/kilnc" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" \
    "${train_flags[@]}" --stats 2>"${out}/${sample}.stats"
done
"${bin}/tools/kilnc/kilnc" samples/sine_block.mlir -o "${out}/sine_block_bf16.kiln" \
  "${train_flags[@]}" --precision=bf16 --stats 2>"${out}/sine_block_bf16.stats"
bazel build //samples:make_dataset >/dev/null
# 1000 steps of fresh data: 4000 sequences (batch 4), 64000 samples (batch 64).
"${bin}/samples/make_dataset" --task sine --records 4000 --seed 5 --out "${out}/sine.kilndata"
"${bin}/samples/make_dataset" --task regression --records 64000 --seed 5 --out "${out}/regression.kilndata"
cp "${bin}/tools/kiln-run/kiln-run" "${bin}/samples/train_gpu" "${out}/"
cp tests/gpu/codegen/run.sh tests/gpu/codegen/eval_kiln_run.py "${out}/"
echo "bundle in ${out} (inputs drawn with seed ${seed})"
