#!/bin/bash
# Builds, on this machine, the benchmark bundle into DIR (default
# .gpu-bundle/bench, git-ignored):
#  - kiln-run (static; the CUDA driver is loaded at run time);
#  - the artifacts: the training steps of samples/sine_block.mlir and
#    samples/mlp.mlir (kilnc, AdamW), the bf16 GEMM + bias + GELU(tanh)
#    models and the embedding-gradient model of bench/models (kilnc
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
#  - kiln_rnn.py (samples/torch/: the recurrences in PyTorch) when the
#    checkout has it, and FlashRNN's source (flashrnn/, FLASHRNN_COMMIT) from
#    its git directory FLASHRNN_GIT (default /work/.mirror/NX-AI+flashrnn/repo;
#    FLASHRNN_REV, default HEAD), left out with a message when absent;
#  - COMMIT (the kiln commit the bundle was built from) and run.py.
# Then, on the GPU machine, from inside DIR: python3 run.py RESULTS.md
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.gpu-bundle/bench}"
seed=1
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run >/dev/null 2>&1 ||
  bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
kilnref="${bin}/tools/kiln-ref/kiln-ref"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

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
  "${kilnref}" "${tmp}/inputs.mlir" --fn inputs --random-seed "${seed}" \
    --int-range "${int_range}" --save-inputs "${file}" -o /dev/null
}

# Training steps of the samples: x, y drawn first, then the parameters under
# the same seed around them (the loss is computed on the CPU: small models).
draw_inputs "${out}/sine_block.inputs.safetensors" x:tensor\<4x32x1xf32\> y:tensor\<4x32x1xf32\>
draw_inputs "${out}/mlp.inputs.safetensors" x:tensor\<64x8xf32\> y:tensor\<64x1xf32\>
for sample in sine_block mlp; do
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" \
    --stats 2>"${out}/${sample}.stats"
  "${kilnref}" "samples/${sample}.mlir" --fn loss --random-seed "${seed}" \
    --inputs "${out}/${sample}.inputs.safetensors" --precision f64 \
    --save-inputs "${out}/${sample}.params.safetensors" \
    -o "${out}/${sample}.expected.safetensors"
done

# GEMM + bias + GELU, named M x K x N.
for model in bench/models/gemm_bias_gelu_*.mlir; do
  name="$(basename "${model}" .mlir)"
  "${kilnc}" --inference --function f "${model}" -o "${out}/${name}.kiln" \
    --stats 2>"${out}/${name}.stats"
  dims="${name##*_}"
  IFS=x read -r m k n <<<"${dims}"
  if (( m * k + k * n > 64 * 1024 * 1024 / 2 )) && [[ "${FULL_INPUTS:-0}" != 1 ]]; then
    continue  # drawn on the GPU machine by run.py
  fi
  draw_inputs "${out}/${name}.inputs.safetensors" x:tensor\<${m}x${k}xbf16\> \
    w:tensor\<${k}x${n}xbf16\> b:tensor\<${n}xbf16\>
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

# Recurrent layers: the forward pass (entry rnn) and the loss's
# forward_backward in one artifact per model.
for model in bench/models/rnn_*.mlir; do
  name="$(basename "${model}" .mlir)"
  if ! "${kilnc}" --train=sgd "${model}" -o "${out}/${name}.kiln" \
      --stats 2>"${out}/${name}.stats"; then
    rm -f "${out}/${name}.kiln"
    mv "${out}/${name}.stats" "${out}/${name}.kilnc-error"
    echo "kilnc failed on ${model} (${out}/${name}.kilnc-error):" \
      "$(grep -m1 'error' "${out}/${name}.kilnc-error")" >&2
  fi
done
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

cp "${bin}/tools/kiln-run/kiln-run" bench/run.py "${out}/"
commit="$(git rev-parse HEAD)"
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
  commit+="-dirty"
fi
echo "${commit}" >"${out}/COMMIT"
echo "bundle in ${out} ($(du -sh "${out}" | cut -f1), commit ${commit})"
