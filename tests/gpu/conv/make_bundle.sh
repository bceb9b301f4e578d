#!/bin/bash
# Builds the GPU check of the convolution kernels into DIR (default
# .gpu-bundle/conv): the models of gen_models.py (conv2d forward, input and
# filter gradients over kernel sizes, strides, padding, dilation, groups and
# both layouts; fused epilogues) in five modes: inference, f32 sgd, tf32 sgd,
# bf16 adamw and f16 adamw (the forward, or the loss and every gradient of
# forward_backward), each against kiln-ref's f64 outputs on fresh random
# arguments (tests/ops/make_gpu_cases.sh), kiln-run, and DIR.tar.gz of it all.
# On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   SEED=N tests/gpu/conv/make_bundle.sh [DIR]
# KILN_BIN=FOLDER takes kilnc, kiln-ref and kiln-run from FOLDER instead of
# building them with bazel. The bundle (an artifact per model and mode) is
# best carried as the tarball.
set -euo pipefail
[[ -z "${KILN_BIN:-}" ]] || KILN_BIN="$(cd "${KILN_BIN}" && pwd)"
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/conv}"
seed="${SEED:-$(date +%s)}"
if [[ -n "${KILN_BIN:-}" ]]; then
  kilnc="${KILN_BIN}/kilnc" kilnref="${KILN_BIN}/kiln-ref" kilnrun="${KILN_BIN}/kiln-run"
else
  bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run >/dev/null
  bin="$(bazel info bazel-bin 2>/dev/null)"
  kilnc="${bin}/tools/kilnc/kilnc" kilnref="${bin}/tools/kiln-ref/kiln-ref"
  kilnrun="${bin}/tools/kiln-run/kiln-run"
fi
rm -rf "${out}" "${out}.tar.gz"
mkdir -p "${out}"
models="$(mktemp -d)"
trap 'rm -rf "${models}"' EXIT
python3 tests/gpu/conv/gen_models.py "${models}"
MODES="inference f32_sgd tf32_sgd bf16_adamw f16_adamw" tests/ops/make_gpu_cases.sh "${out}" \
  "${seed}" "${kilnc}" "${kilnref}" "${models}"
cp "${kilnrun}" "${out}/"
tar -czf "${out}.tar.gz" -C "$(dirname "${out}")" "$(basename "${out}")"
