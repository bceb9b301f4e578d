#!/bin/bash
# Builds the GPU check of the recurrent kernels into DIR (default
# .gpu-bundle/rnn): the models of gen_models.py in two modes (f32 sgd and
# bf16 adamw: the loss and every gradient of forward_backward), each against kiln-ref's
# f64 outputs on fresh random arguments (tests/ops/make_gpu_cases.sh), and
# kiln-run. On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   SEED=N [MODELS=REGEX] tests/gpu/rnn/make_bundle.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/rnn}"
seed="${SEED:-$(date +%s)}"
bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
rm -rf "${out}"
mkdir -p "${out}"
models="$(mktemp -d)"
trap 'rm -rf "${models}"' EXIT
python3 tests/gpu/rnn/gen_models.py "${models}"
# MODELS=REGEX keeps the models whose names match (the compute-sanitizer
# runs take a few small ones of each kernel variant).
if [[ -n "${MODELS:-}" ]]; then
  for model in "${models}"/*.mlir; do
    [[ "$(basename "${model}" .mlir)" =~ ^(${MODELS})$ ]] || rm "${model}"
  done
fi
MODES="f32_sgd bf16_adamw" tests/ops/make_gpu_cases.sh "${out}" "${seed}" "${bin}/tools/kilnc/kilnc" \
  "${bin}/tools/kiln-ref/kiln-ref" "${models}"
cp "${bin}/tools/kiln-run/kiln-run" "${out}/"
