#!/bin/bash
# Builds, on this machine, the GPU check of kilnc's generated kernels and of
# training on the GPU, into DIR (default .gpu-bundle/codegen):
#  - for every model in tests/gpu/codegen: its artifact (kilnc --inference),
#    fresh random inputs and the f64 reference outputs (kiln-ref);
#  - the sine block and the MLP compiled for training (kilnc);
#  - every op-coverage model of tests/ops in three modes (make_gpu_cases.sh);
#  - kiln-run and train_gpu (static binaries that run there).
# Then, on the GPU machine: DIR/run.sh LOGDIR.
# BAZEL_FLAGS (e.g. "-c opt") are passed to every bazel command.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/codegen}"
seed="${SEED:-$RANDOM}"
rm -rf "${out}"
mkdir -p "${out}"
flags=(${BAZEL_FLAGS:-})
bazel build "${flags[@]}" //tools/kilnc //tools/kiln-ref //tools/kiln-run //samples:train_gpu >/dev/null
bin="$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)"

for model in tests/gpu/codegen/*.mlir; do
  name="$(basename "${model}" .mlir)"
  "${bin}/tools/kilnc/kilnc" --inference --function f "${model}" \
    -o "${out}/${name}.kiln" --stats 2>"${out}/${name}.stats"
  "${bin}/tools/kiln-ref/kiln-ref" "${model}" --function f --random-seed "${seed}" \
    --precision f64 --save-inputs "${out}/${name}.inputs.safetensors" \
    -o "${out}/${name}.expected.safetensors"
done
# The cp.async wgmma kernel (what --no-tma and batches of GEMMs take) on the
# products that otherwise take the TMA kernel.
"${bin}/tools/kilnc/kilnc" --inference --function f --no-tma tests/gpu/codegen/gemm_wgmma.mlir \
  -o "${out}/gemm_wgmma_notma.kiln" --stats 2>"${out}/gemm_wgmma_notma.stats"
cp "${out}/gemm_wgmma.inputs.safetensors" "${out}/gemm_wgmma_notma.inputs.safetensors"
cp "${out}/gemm_wgmma.expected.safetensors" "${out}/gemm_wgmma_notma.expected.safetensors"
# The same products in thread-block clusters of two blocks (--gemm-cluster)
# and with TMA stores (--gemm-tma-store), and the attention models with a block per work item
# (--persistent-attention=false), with the one-pass backward
# (--fused-attention-backward) and with the forward's consumers taking
# turns or not (--attention-schedule=pingpong, =cooperative), against the
# same references.
variant() { # MODEL SUFFIX KILNC-FLAGS...
  local model="$1" suffix="$2"
  shift 2
  "${bin}/tools/kilnc/kilnc" --inference --function f "$@" "tests/gpu/codegen/${model}.mlir" \
    -o "${out}/${model}_${suffix}.kiln" --stats 2>"${out}/${model}_${suffix}.stats"
  cp "${out}/${model}.inputs.safetensors" "${out}/${model}_${suffix}.inputs.safetensors"
  cp "${out}/${model}.expected.safetensors" "${out}/${model}_${suffix}.expected.safetensors"
}
for model in gemm_tma gemm_wgmma; do
  variant "${model}" cluster --gemm-cluster=auto
  variant "${model}" tmastore --gemm-tma-store
done
for model in attention attention_grad attention_items attention_pairs attention_layouts; do
  variant "${model}" per_item --persistent-attention=false
done
for model in attention_grad attention_items attention_pairs; do
  variant "${model}" fused --fused-attention-backward
  variant "${model}" pingpong --attention-schedule=pingpong
  variant "${model}" cooperative --attention-schedule=cooperative
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
# One update of each optimizer and gradient transform on random state: the
# artifact's train_step against kiln-ref's f64 train_step of the module kilnc
# compiled (its --emit=mlir). NAME MODEL STEP LR KILNC-FLAGS...
update_case() {
  local name="$1" model="$2" step="$3" lr="$4"
  shift 4
  "${bin}/tools/kilnc/kilnc" "samples/${model}.mlir" -o "${out}/update_${name}.kiln" "$@"
  "${bin}/tools/kilnc/kilnc" "samples/${model}.mlir" -o "${tmp}/update_${name}.mlir" \
    --emit=mlir "$@"
  "${bin}/tools/kiln-ref/kiln-ref" "${tmp}/update_${name}.mlir" --function train_step \
    --random-seed "${seed}" --save-inputs "${tmp}/drawn.safetensors" -o /dev/null
  python3 tests/gpu/codegen/make_update_case.py "${tmp}/drawn.safetensors" \
    "${step}" "${lr}" "${out}/update_${name}"
  "${bin}/tools/kiln-ref/kiln-ref" "${tmp}/update_${name}.mlir" --function train_step \
    --inputs "${out}/update_${name}.inputs.safetensors" --precision f64 \
    -o "${out}/update_${name}.reference.safetensors"
}
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
update_case mlp_sgd_nesterov mlp 7 0.05 --train=sgd --momentum=0.9 --nesterov --weight-decay=0.01
update_case mlp_adam mlp 5 0.01 --train=adam --beta1=0.8 --beta2=0.95
update_case mlp_adamw_clip_norm mlp 9 0.01 --train=adamw --weight-decay=0.1 --clip-norm=0.5
update_case mlp_adamw_clip_value_scale mlp 3 0.01 --train=adamw --clip-value=0.05 --grad-scale=0.5
update_case mlp_adamw_noise mlp 4 0.01 --train=adamw --grad-noise=0.1 --grad-noise-seed=11
update_case sine_block_adamw sine_block 12 0.003 --train=adamw --beta2=0.99 --clip-norm=1
update_case sine_block_adamw_bf16 sine_block 12 0.003 --train=adamw --beta2=0.99 --clip-norm=1 --precision=bf16
cp tests/gpu/codegen/safetensors_lite.py tests/gpu/codegen/compare_checkpoint.py "${out}/"
# The op-coverage models: each op's forward and gradients in three modes.
tests/ops/make_gpu_cases.sh "${out}/ops" "${seed}" "${bin}/tools/kilnc/kilnc" \
  "${bin}/tools/kiln-ref/kiln-ref"

bazel build "${flags[@]}" //samples:make_dataset >/dev/null
# 1000 steps of fresh data: 4000 sequences (batch 4), 64000 samples (batch 64).
"${bin}/samples/make_dataset" --task sine --records 4000 --seed 5 --out "${out}/sine.kilndata"
"${bin}/samples/make_dataset" --task regression --records 64000 --seed 5 --out "${out}/regression.kilndata"
cp "${bin}/tools/kiln-run/kiln-run" "${bin}/samples/train_gpu" "${out}/"
# The MLP with its gradient statistics (kilnc --grad-stats): kiln-run logs
# them as TensorBoard scalars, read back with TensorBoard's reader.
"${bin}/tools/kilnc/kilnc" samples/mlp.mlir --train=adamw --grad-stats \
  -o "${out}/mlp_grad_stats.kiln"
cp tests/gpu/codegen/run.sh tests/gpu/codegen/eval_kiln_run.py tests/gpu/sanitized.sh \
  tests/gpu/check_tensorboard.py "${out}/"
echo "bundle in ${out} (inputs drawn with seed ${seed})"
