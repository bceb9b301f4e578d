#!/bin/bash
# Builds the GPU check of N generated graphs into DIR: per graph and mode
# (inference, f32 SGD, bf16 AdamW) that compiles, the artifact, fresh random
# arguments and kiln-ref's f64 outputs of the compiled entry, each checked
# here with kiln-run --dry-run; kiln-run, the runner and DIR.tar.gz of it
# all. On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   tests/fuzz/graph/make_gpu_bundle.sh DIR N [SEED [FIRST]]
# SEED defaults to the time; graph S:I is the same as in the CPU fuzzer.
# KILN_BIN=FOLDER takes kilnc, kiln-opt, kiln-ref and kiln-run from FOLDER
# instead of building them with bazel. Run from anywhere.
set -euo pipefail
[[ -z "${KILN_BIN:-}" ]] || KILN_BIN="$(cd "${KILN_BIN}" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)" count="$2"
seed="${3:-$(date +%s)}" first="${4:-0}"
cd "$(dirname "$0")/../../.."
if [[ -z "${KILN_BIN:-}" ]]; then
  bazel build //tools/kilnc //tools/kiln-opt //tools/kiln-ref //tools/kiln-run >/dev/null
  KILN_BIN="$(mktemp -d)"
  trap 'rm -rf "${KILN_BIN}"' EXIT
  bin="$(bazel info bazel-bin 2>/dev/null)"
  for tool in kilnc kiln-opt kiln-ref kiln-run; do ln -s "${bin}/tools/${tool}/${tool}" "${KILN_BIN}/${tool}"; done
fi
rm -rf "${out:?}"/* "${out}.tar.gz"
status=0
/usr/bin/python3 tests/fuzz/graph/graph_fuzz.py bundle --bin "${KILN_BIN}" --seed "${seed}" \
  --first "${first}" --count "${count}" --out "${out}" || status=1
cp "$(readlink -f "${KILN_BIN}/kiln-run")" tests/ops/run_gpu_cases.sh "${out}/"
tar -czf "${out}.tar.gz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "wrote ${out}.tar.gz (seed ${seed}); on the GPU machine: $(basename "${out}")/run_gpu_cases.sh $(basename "${out}") LOGDIR"
exit "${status}"
