#!/bin/bash
# Builds, on this machine, the bundle of the determinism check into DIR
# (default .gpu-bundle/determinism, git-ignored) and DIR.tar.gz (what a
# device call carries):
#   tests/gpu/determinism/make_bundle.sh [DIR]
# Then, on the GPU machine, from inside DIR: ./run.sh LOGDIR (run.sh says
# what it checks).
#
# The cases (CASES: "NAME train|run ENTRY [ARTIFACT]"), in this order:
#  - the transformer block at B8 T1024 C1024 (bench/models, bf16 AdamW);
#  - every sample model (samples/*.mlir and samples/custom/model.mlir),
#    trained with kilnc's default AdamW, f32 and (mlp, sine_block, byte_lm,
#    transformer_classifier) bf16;
#  - GENERATED (4) graphs of the whole-pipeline fuzzer's corpus
#    (tests/fuzz/pipeline_corpus, in name order) that kilnc compiles for bf16
#    AdamW training;
#  - the bench models: ResNet-18 (trained), the recurrent layers (their
#    forward entry rnn), attention at B8 H16 T2048 (D64 causal, D128) and a
#    convolution (the persistent wgmma kernel, which does not wait for its
#    predecessor) through their gradient entries, and the block's GEMM
#    shapes.
# Training cases compare checkpoints, the others the entry's outputs (kiln-run
# --output writes the arena outputs, not the gradients a forward_backward
# entry leaves in resident buffers: training covers those).
# A model kilnc refuses is left out with its message in DIR/SKIPPED.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/determinism}"
generated="${GENERATED:-4}"
rm -rf "${out}" "${out}.tar.gz"
mkdir -p "${out}"
targets=(//tools/kilnc //tools/kiln-run //tests/gpu/determinism:draw_inputs)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
: >"${out}/CASES"
: >"${out}/SKIPPED"

# compile NAME MODEL KILNC-FLAGS...: NAME.kiln, or a line in SKIPPED.
compile() {
  local name="$1" model="$2"
  shift 2
  if "${kilnc}" "${model}" -o "${out}/${name}.kiln" "$@" 2>"${out}/${name}.err"; then
    rm -f "${out}/${name}.err"
    return 0
  fi
  echo "${name}: kilnc ${model} $*: $(grep -m1 -i error "${out}/${name}.err")" \
    >>"${out}/SKIPPED"
  rm -f "${out}/${name}.err" "${out}/${name}.kiln"
  return 1
}
# train NAME MODEL KILNC-FLAGS...: a training case.
train() {
  compile "$@" && echo "$1 train train_step" >>"${out}/CASES" || true
}
# entry NAME ENTRY MODEL KILNC-FLAGS...: a case that calls ENTRY once.
entry() {
  local name="$1" what="$2"
  shift 2
  compile "${name}" "$@" && echo "${name} run ${what}" >>"${out}/CASES" || true
}

# The block first, then the quick cases, then the bench models.
block=bench/models/transformer_block_b8t1024c1024.mlir
block_flags=(--train=adamw --precision=bf16)
train block "${block}" "${block_flags[@]}"

for model in samples/*.mlir samples/custom/model.mlir; do
  name="$(basename "${model}" .mlir)"
  [[ "${model}" == samples/custom/* ]] && name=custom_op
  train "${name}" "${model}"
done
for name in mlp sine_block byte_lm transformer_classifier; do
  train "${name}_bf16" "samples/${name}.mlir" --precision=bf16
done

count=0
for model in tests/fuzz/pipeline_corpus/*; do
  ((count < generated)) || break
  name="generated_$(basename "${model}" | cut -c1-12)"
  if "${kilnc}" "${model}" --train=adamw --precision=bf16 -o "${out}/${name}.kiln" \
      2>/dev/null; then
    echo "${name} train train_step" >>"${out}/CASES"
    count=$((count + 1))
  fi
done

train resnet18 bench/models/resnet18_32.mlir --train=adamw --precision=bf16
# The recurrent layers keep a bf16 loss, which kiln-run does not train
# with (it reads an f32 one): their entry rnn, every state of every step.
for model in bench/models/rnn_*_12x64.mlir; do
  entry "$(basename "${model}" .mlir)" rnn "${model}" --train=sgd
done
for model in bench/models/attention_b8h16t2048_d64_causal.mlir \
    bench/models/attention_b8h16t2048_d128.mlir \
    bench/models/conv_nhwc_3x3_64_64_56.mlir; do
  entry "$(basename "${model}" .mlir)" fwdbwd "${model}" --inference --function f
done
for model in bench/models/gemm_block_{nn_8192x1024x4096,tn_1024x8192x4096}.mlir \
    bench/models/gemm_bias_gelu_512x1024x4096.mlir; do
  entry "$(basename "${model}" .mlir)" forward "${model}" --inference --function f
done

cp "${bin}/tools/kiln-run/kiln-run" "${bin}/tests/gpu/determinism/draw_inputs" "${out}/"
chmod u+w,+x "${out}/kiln-run" "${out}/draw_inputs"
cp tests/gpu/determinism/run.sh tests/gpu/determinism/compare.py tests/gpu/sanitized.sh "${out}/"
git rev-parse HEAD >"${out}/COMMIT" 2>/dev/null || true
tar -czf "${out}.tar.gz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "bundle in ${out} ($(wc -l <"${out}/CASES") cases; skipped: $(wc -l <"${out}/SKIPPED")), carried as ${out}.tar.gz ($(du -h "${out}.tar.gz" | cut -f1))"
