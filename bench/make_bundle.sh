#!/bin/bash
# Builds, on this machine, the benchmark bundle into DIR (default
# .gpu-bundle/bench, git-ignored):
#  - kiln-run (static; the CUDA driver is loaded at run time);
#  - the artifacts: the training steps of samples/sine_block.mlir and
#    samples/mlp.mlir (kilnc, AdamW), the bf16 GEMM + bias + GELU(tanh)
#    models, the products of the transformer block's training step
#    (gemm_block_*) and the embedding-gradient model of bench/models (kilnc
#    --inference --function f);
#  - inputs drawn by kiln-ref under --random-seed 1, uniform in [-1, 1):
#      NAME.inputs.safetensors   the caller's inputs of the entry that is timed
#                                (x, y for train_step: lr and step are supplied
#                                by the runtime; x, w, b for the GEMMs);
#      NAME.params.safetensors   the samples' parameters (and x, y), loaded by
#                                kiln-run --params and by the PyTorch models so
#                                that both time the same numbers (never zeros);
#      NAME.expected.safetensors the samples' loss at those parameters (kiln-ref,
#                                f64), which run.py checks the PyTorch models by;
#    the inputs of the 8192x4096x4096 GEMM (96 MiB) and of the embedding
#    gradient (32 MiB) are drawn on the GPU machine by run.py instead,
#    unless FULL_INPUTS=1 (about 30 s more here);
#  - the recurrent layers of bench/models/rnn_*.mlir (kilnc --train=sgd: the
#    entries rnn and forward_backward), whose inputs run.py draws on the GPU
#    machine; a model kilnc cannot compile leaves NAME.kilnc-error (kilnc's
#    message) instead of NAME.kiln, and run.py still times the others;
#  - the transformer block at B8 T1024 C1024 (bench/models/transformer_block_*,
#    kilnc --train=adamw --precision=bf16), whose parameters and batch run.py
#    draws on the GPU machine;
#  - the byte-level GPT sample (samples/byte_lm.mlir with its dropout off,
#    kilnc --train=adamw, f32 and --precision=bf16): a batch of random bytes,
#    parameters and kiln-ref's f64 loss (seed 1), and compare_losses.py
#    (samples/torch/), whose PyTorch model run.py times;
#  - attention at B8 H16 T2048 (bench/models/attention_*.mlir, kilnc
#    --inference --function f: the entries forward and fwdbwd), whose inputs
#    run.py draws on the GPU machine;
#  - the convolutions of bench/models/conv_*.mlir (ResNet-50's layers, N32
#    bf16, NHWC and NCHW: kilnc --inference --function f, the entries
#    forward, fwdbwd and for the stem fwdbwd_nodx), whose inputs run.py
#    draws on the GPU machine; NAME.kilnc-error where kilnc fails, as for the
#    recurrent layers;
#  - ResNet-18 (bench/models/resnet18_32.mlir, kilnc --train=adamw
#    --precision=bf16; NAME.kilnc-error where kilnc fails): its batch x, y
#    (kiln-ref, seed 1; its parameters are drawn on the GPU by kiln-run's
#    initialisers) and, when it compiled, kiln-ref's f64 loss at the same
#    initialisers (resnet18_32.expected.safetensors, about 2 minutes;
#    RESNET_FULL_CHECK=0 leaves it out); the narrow copy
#    bench/models/resnet18_32_check.mlir's inputs, parameters and f64 loss
#    (kiln-ref, seconds), which run.py checks its PyTorch model by;
#  - kiln_rnn.py (samples/torch/: the recurrences in PyTorch) when the
#    checkout has it, and FlashRNN's source (flashrnn/, FLASHRNN_COMMIT) from
#    its git directory FLASHRNN_GIT (default /work/.mirror/NX-AI+flashrnn/repo;
#    FLASHRNN_REV, default HEAD), left out with a message when absent;
#  - COMMIT (the kiln commit the bundle was built from), run.py with its
#    modules (bench_*.py) and the profile scripts (profile_gemm.sh,
#    profile_entry.sh, profile_kernels.py).
# Then, on the GPU machine, from inside DIR: python3 run.py RESULTS.md
#
# KILN_BIN=DIR takes kilnc, kiln-ref and kiln-run from DIR instead of
# building them with Bazel.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.gpu-bundle/bench}"
seed=1
rm -rf "${out}"
mkdir -p "${out}"
if [[ -n "${KILN_BIN:-}" ]]; then
  kilnc="${KILN_BIN}/kilnc"
  kilnref="${KILN_BIN}/kiln-ref"
  kilnrun="${KILN_BIN}/kiln-run"
else
  bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run >/dev/null 2>&1 ||
    bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run
  bin="$(bazel info bazel-bin 2>/dev/null)"
  kilnc="${bin}/tools/kilnc/kilnc"
  kilnref="${bin}/tools/kiln-ref/kiln-ref"
  kilnrun="${bin}/tools/kiln-run/kiln-run"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# The generated models must be what their scripts write.
python3 bench/models/gen_conv.py --check
python3 bench/models/gen_resnet18.py --check
python3 bench/models/gen_attention.py --check
python3 bench/models/gen_block_gemms.py --check
python3 bench/models/gen_transformer_block.py --check

# Compiles MODEL into ${out}/NAME.kiln with kilnc's FLAGS (NAME.stats: its
# --stats); where kilnc fails, leaves its message in NAME.kilnc-error
# instead (run.py reports it in the kiln row and times the rest) and
# returns 1.
compile_or_note() { # MODEL NAME FLAGS...
  local model="$1" name="$2"
  shift 2
  if ! "${kilnc}" "$@" "${model}" -o "${out}/${name}.kiln" \
      --stats 2>"${out}/${name}.stats"; then
    rm -f "${out}/${name}.kiln"
    mv "${out}/${name}.stats" "${out}/${name}.kilnc-error"
    echo "kilnc failed on ${model} (${out}/${name}.kilnc-error):" \
      "$(grep -m1 'error' "${out}/${name}.kilnc-error")" >&2
    return 1
  fi
}

# Writes a function `inputs` that takes the named arguments ("name:type" ...)
# and returns nothing: kiln-ref --save-inputs then draws them without running
# any of the model's arithmetic. i32 arguments are uniform in
# [0, ${int_range}).
int_range=4
draw_inputs() { # FILE NAME:TYPE...
  local file="$1" args="" sep=""
  shift
  for arg in "$@"; do
    args+="${sep}%${arg%%:*}: ${arg#*:} {kiln.name = \"${arg%%:*}\"}"
    sep=", "
  done
  echo "func.func @inputs(${args}) {
  return
}" >"${tmp}/inputs.mlir"
  "${kilnref}" "${tmp}/inputs.mlir" --function inputs --random-seed "${seed}" \
    --int-range "${int_range}" --save-inputs "${file}" -o /dev/null
}

# Training steps of the samples: x, y drawn first, then the parameters under
# the same seed around them (the loss is computed on the CPU: small models).
draw_inputs "${out}/sine_block.inputs.safetensors" x:tensor\<4x32x1xf32\> y:tensor\<4x32x1xf32\>
draw_inputs "${out}/mlp.inputs.safetensors" x:tensor\<64x8xf32\> y:tensor\<64x1xf32\>
for sample in sine_block mlp; do
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" \
    --stats 2>"${out}/${sample}.stats"
  "${kilnref}" "samples/${sample}.mlir" --function loss --random-seed "${seed}" \
    --inputs "${out}/${sample}.inputs.safetensors" --precision f64 \
    --save-inputs "${out}/${sample}.params.safetensors" \
    -o "${out}/${sample}.expected.safetensors"
done

# A GEMM model as NAME.kiln, and as NAME_SUFFIX.kiln for each variant run.py
# compares it with (bench_gemm.py's GEMM_VARIANTS): in thread-block clusters that
# share the rhs tile, with TMA stores, and in the ping-pong schedule.
gemm_with_variants() { # MODEL NAME
  local model="$1" name="$2" variant
  "${kilnc}" --inference --function f "${model}" -o "${out}/${name}.kiln" \
    --stats 2>"${out}/${name}.stats"
  for variant in cluster:--gemm-cluster=auto tmastore:--gemm-tma-store \
    pingpong:--gemm-schedule=pingpong; do
    "${kilnc}" --inference --function f "${model}" \
      -o "${out}/${name}_${variant%%:*}.kiln" "${variant#*:}" \
      --stats 2>"${out}/${name}_${variant%%:*}.stats"
  done
}

# GEMM + bias + GELU, named M x K x N.
for model in bench/models/gemm_bias_gelu_*.mlir; do
  name="$(basename "${model}" .mlir)"
  gemm_with_variants "${model}" "${name}"
  dims="${name##*_}"
  IFS=x read -r m k n <<<"${dims}"
  if (( m * k + k * n > 64 * 1024 * 1024 / 2 )) && [[ "${FULL_INPUTS:-0}" != 1 ]]; then
    continue  # drawn on the GPU machine by run.py
  fi
  draw_inputs "${out}/${name}.inputs.safetensors" x:tensor\<${m}x${k}xbf16\> \
    w:tensor\<${k}x${n}xbf16\> b:tensor\<${n}xbf16\>
done

# The products of the transformer block's training step, each alone
# (bench/models/gen_block_gemms.py), with the same variants; run.py draws
# their operands on the GPU machine.
for model in bench/models/gemm_block_*.mlir; do
  gemm_with_variants "${model}" "$(basename "${model}" .mlir)"
done

# The gradient of an embedding table, named V x D _ B x T (lookups): g
# uniform in [-1, 1), tokens uniform over the table's rows.
for model in bench/models/embedding_backward_*.mlir; do
  name="$(basename "${model}" .mlir)"
  "${kilnc}" --inference --function f "${model}" -o "${out}/${name}.kiln" \
    --stats 2>"${out}/${name}.stats"
  [[ "${FULL_INPUTS:-0}" == 1 ]] || continue  # drawn on the GPU machine by run.py
  dims="${name#embedding_backward_}"
  IFS=x read -r v d <<<"${dims%%_*}"
  IFS=x read -r b t <<<"${dims#*_}"
  int_range="${v}" draw_inputs "${out}/${name}.inputs.safetensors" \
    g:tensor\<${b}x${t}x${d}xbf16\> tokens:tensor\<${b}x${t}xi32\>
done

# Cross entropy: the training step's forward_backward (loss and gradient);
# the logits are the parameter, drawn on the GPU by kiln-run's initialiser,
# the labels uniform over the vocabulary. NAME.stats has the entries' arena.
for model in bench/models/cross_entropy_*.mlir; do
  name="$(basename "${model}" .mlir)"
  "${kilnc}" --train=sgd "${model}" -o "${out}/${name}.kiln" \
    --stats 2>"${out}/${name}.stats"
  dims="${name#cross_entropy_}"
  IFS=x read -r n v <<<"${dims}"
  int_range="${v}" draw_inputs "${out}/${name}.inputs.safetensors" labels:tensor\<${n}xi32\>
done

# The transformer block at B8 T1024 C1024 (gen_transformer_block.py): its
# train_step in bf16 with f32 master weights; run.py draws the parameters and
# the batch on the GPU machine.
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024 --train=adamw --precision=bf16 || true
# The same step within the memory goal, 437 MiB of device memory (resident
# buffers plus arena): kilnc --memory-budget recomputes what it can.
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_budget --train=adamw --precision=bf16 \
  --memory-budget=$((437 * 1024 * 1024)) || true
# ... and with every launch apart, whose buffers may then be reused at once.
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_budget_nomerge --train=adamw --precision=bf16 \
  --memory-budget=$((437 * 1024 * 1024)) --no-merge-launches || true
# The default step with its GEMMs in thread-block clusters, with a block
# per attention work item (not persistent), with the one-pass attention
# backward, with the GEMMs' TMA stores, and with the attention forward's
# consumers taking turns, for comparison.
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_cluster --train=adamw --precision=bf16 \
  --gemm-cluster=auto || true
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_per_item --train=adamw --precision=bf16 \
  --persistent-attention=false || true
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_fused --train=adamw --precision=bf16 \
  --fused-attention-backward || true
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_tmastore --train=adamw --precision=bf16 \
  --gemm-tma-store || true
compile_or_note bench/models/transformer_block_b8t1024c1024.mlir \
  transformer_block_b8t1024c1024_attncoop --train=adamw --precision=bf16 \
  --attention-schedule=cooperative || true

# The byte-level GPT sample with its dropout off (both sides then train the
# same function): its train_step in f32 and in bf16 (f32 master weights);
# a batch of random bytes and the parameters as kiln-ref's initialisers draw
# them (seed 1), its f64 loss there, and the model and compare_losses.py,
# whose PyTorch model run.py times.
sed -E 's/(kiln\.dropout .* rate = )[0-9.e+-]+/\10.0/' samples/byte_lm.mlir \
  >"${out}/byte_lm_nodrop.mlir"
grep -q 'rate = 0.0 ' "${out}/byte_lm_nodrop.mlir"
compile_or_note "${out}/byte_lm_nodrop.mlir" byte_lm --train=adamw || true
compile_or_note "${out}/byte_lm_nodrop.mlir" byte_lm_bf16 --train=adamw --precision=bf16 || true
int_range=256 draw_inputs "${out}/byte_lm.inputs.safetensors" tokens:tensor\<32x128xi32\> \
  targets:tensor\<32x128xi32\> dropout_offset:tensor\<32xi32\>
"${kilnref}" "${out}/byte_lm_nodrop.mlir" --function loss --random-seed "${seed}" \
  --inputs "${out}/byte_lm.inputs.safetensors" --precision f64 \
  --save-inputs "${out}/byte_lm.params.safetensors" \
  -o "${out}/byte_lm.expected.safetensors"
cp samples/torch/compare_losses.py "${out}/"

# Attention at B8 H16 T2048 (bench/models/gen_attention.py): one artifact
# per shape with the entries forward (the function f) and fwdbwd; run.py
# draws q, k, v and g on the GPU machine.
for model in bench/models/attention_*.mlir; do
  compile_or_note "${model}" "$(basename "${model}" .mlir)" --inference --function f || true
  # A block per work item or causal pair (not persistent), for comparison.
  compile_or_note "${model}" "$(basename "${model}" .mlir)_per_item" --inference \
    --function f --persistent-attention=false || true
  # The backward in one pass (dQ by bulk reductions, not deterministic).
  compile_or_note "${model}" "$(basename "${model}" .mlir)_fused" --inference \
    --function f --fused-attention-backward || true
  # The forward's other schedule: its consumer warpgroups taking turns
  # where they do not by default (non-causal), and not where they do.
  if [[ "${model}" == *_causal.mlir ]]; then
    compile_or_note "${model}" "$(basename "${model}" .mlir)_cooperative" --inference \
      --function f --attention-schedule=cooperative || true
  else
    compile_or_note "${model}" "$(basename "${model}" .mlir)_pingpong" --inference \
      --function f --attention-schedule=pingpong || true
  fi
done

# Recurrent layers: the forward pass (entry rnn) and the loss's
# forward_backward in one artifact per model.
for model in bench/models/rnn_*.mlir; do
  compile_or_note "${model}" "$(basename "${model}" .mlir)" --train=sgd || true
done

# Convolutions, named LAYOUT_KxK[s2]_IN_OUT_SIZE: one artifact per layer and
# layout with the entries forward (the function f), fwdbwd and, for the
# stem, fwdbwd_nodx; run.py draws x, w and g on the GPU machine.
# Channels last, the same with the threads gathering the operands (--no-tma)
# beside it, for the comparison.
for model in bench/models/conv_*.mlir; do
  compile_or_note "${model}" "$(basename "${model}" .mlir)" --inference --function f || true
  if [[ "$(basename "${model}")" == conv_nhwc_* ]]; then
    compile_or_note "${model}" "$(basename "${model}" .mlir)_notma" --inference \
      --function f --no-tma || true
  fi
done

# ResNet-18 at 32x32: the timed train_step (bf16 storage, f32 master
# weights) on the batch x, y; kiln-run draws the parameters on the GPU
# (run.py: --seed 1), so kiln-ref computes its f64 loss at the same
# initialisers (--init-params) when there is an artifact to compare with.
# Labels uniform over the 10 classes.
name=resnet18_32
int_range=10 draw_inputs "${out}/${name}.inputs.safetensors" \
  x:tensor\<128x32x32x3xf32\> y:tensor\<128xi32\>
if compile_or_note "bench/models/${name}.mlir" "${name}" --train=adamw --precision=bf16 &&
    [[ "${RESNET_FULL_CHECK:-1}" != 0 ]]; then
  start=${SECONDS}
  "${kilnref}" "bench/models/${name}.mlir" --function loss --random-seed "${seed}" --init-params \
    --inputs "${out}/${name}.inputs.safetensors" --precision f64 \
    -o "${out}/${name}.expected.safetensors"
  echo "kiln-ref: ${name}'s f64 loss in $((SECONDS - start)) s" >&2
fi
# The same layers at an eighth of the width, B16: x, y, then the parameters
# drawn around them (uniform in [-1, 1), none zero) and the f64 loss.
name=resnet18_32_check
int_range=10 draw_inputs "${out}/${name}.inputs.safetensors" \
  x:tensor\<16x32x32x3xf32\> y:tensor\<16xi32\>
"${kilnref}" "bench/models/${name}.mlir" --function loss --random-seed "${seed}" \
  --inputs "${out}/${name}.inputs.safetensors" --precision f64 \
  --save-inputs "${out}/${name}.params.safetensors" \
  -o "${out}/${name}.expected.safetensors"
if [[ -f samples/torch/kiln_rnn.py ]]; then
  cp samples/torch/kiln_rnn.py "${out}/"
else
  echo "samples/torch/kiln_rnn.py not found: run.py's recurrences in PyTorch will fail" >&2
fi
flashrnn_git="${FLASHRNN_GIT:-/work/.mirror/NX-AI+flashrnn/repo}"
if git --git-dir="${flashrnn_git}" rev-parse --verify -q "${FLASHRNN_REV:-HEAD}^{commit}" >/dev/null; then
  # The Python package (flashrnn/: its CUDA and Triton kernels, built on the
  # GPU machine at first use) and its licence.
  git --git-dir="${flashrnn_git}" archive --format=tar "${FLASHRNN_REV:-HEAD}" \
    flashrnn/__init__.py flashrnn/flashrnn flashrnn/autotune LICENSE |
    tar -x -C "${out}"
  mv "${out}/LICENSE" "${out}/flashrnn/LICENSE"
  git --git-dir="${flashrnn_git}" rev-parse "${FLASHRNN_REV:-HEAD}^{commit}" >"${out}/FLASHRNN_COMMIT"
else
  echo "no FlashRNN git directory at ${flashrnn_git}: run.py reports its rows as missing" >&2
fi

cp "${kilnrun}" bench/run.py bench/bench_*.py bench/profile_gemm.sh bench/profile_entry.sh \
  bench/profile_kernels.py "${out}/"
commit="$(git rev-parse HEAD)"
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
  commit+="-dirty"
fi
echo "${commit}" >"${out}/COMMIT"
echo "bundle in ${out} ($(du -sh "${out}" | cut -f1), commit ${commit})"
