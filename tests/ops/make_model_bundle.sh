#!/bin/bash
# Builds a GPU check bundle from a model generator into DIR: the models that
#   python3 GENERATOR OUT_DIR
# writes, in each mode of MODES (tests/ops/make_gpu_cases.sh: the artifact,
# fresh random arguments under SEED and kiln-ref's f64 outputs), kiln-run,
# and DIR.tar.gz of it all. On the GPU machine: DIR/run_gpu_cases.sh DIR
# LOGDIR.
#   SEED=N MODES="..." [MODELS=REGEX] tests/ops/make_model_bundle.sh GENERATOR DIR
# KILN_BIN=FOLDER takes kilnc, kiln-ref and kiln-run from FOLDER instead of
# building them with bazel. Run from anywhere; paths are the repository's.
set -euo pipefail
[[ -z "${KILN_BIN:-}" ]] || KILN_BIN="$(cd "${KILN_BIN}" && pwd)"
cd "$(dirname "$0")/../.."
generator="$1" out="$2"
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
python3 "${generator}" "${models}"
# MODELS=REGEX keeps the models whose names match (the compute-sanitizer
# runs take a few small ones of each kernel variant).
if [[ -n "${MODELS:-}" ]]; then
  for model in "${models}"/*.mlir; do
    [[ "$(basename "${model}" .mlir)" =~ ^(${MODELS})$ ]] || rm "${model}"
  done
fi
MODES="${MODES:?MODES names the builds}" tests/ops/make_gpu_cases.sh "${out}" \
  "${seed}" "${kilnc}" "${kilnref}" "${models}"
cp "${kilnrun}" "${out}/"
tar -czf "${out}.tar.gz" -C "$(dirname "${out}")" "$(basename "${out}")"
