#!/bin/bash
# Builds the GPU check of the attention kernels into DIR (default
# .gpu-bundle/attention): the models of gen_models.py (forward, and the loss
# with the q, k and v gradients, over head dims 32 to 256, causal and not,
# Tq != Tk, partial tiles) in bf16 adamw, f16 adamw, f32 sgd and inference,
# each against kiln-ref's f64 outputs on fresh random arguments
# (tests/ops/make_gpu_cases.sh), kiln-run, and DIR.tar.gz of it all.
# On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   SEED=N tests/gpu/attention/make_bundle.sh [DIR]
# KILN_BIN=FOLDER takes kilnc, kiln-ref and kiln-run from FOLDER instead of
# building them with bazel.
set -euo pipefail
[[ -z "${KILN_BIN:-}" ]] || KILN_BIN="$(cd "${KILN_BIN}" && pwd)"
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/attention}"
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
python3 tests/gpu/attention/gen_models.py "${models}"
MODES="inference f32_sgd bf16_adamw f16_adamw" tests/ops/make_gpu_cases.sh "${out}" \
  "${seed}" "${kilnc}" "${kilnref}" "${models}"
cp "${kilnrun}" "${out}/"
tar -czf "${out}.tar.gz" -C "$(dirname "${out}")" "$(basename "${out}")"
