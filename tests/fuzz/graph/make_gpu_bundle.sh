#!/bin/bash
# Builds the GPU check of N generated graphs into DIR: per graph and mode
# (inference, f32 SGD, bf16 AdamW) that compiles, the artifact, fresh random
# arguments and kiln-ref's f64 outputs of the compiled entry, each checked
# here with kiln-run --dry-run; kiln-run, the runner and DIR.tar.xz of it
# all (about 120 KB a graph and 2 MB of kiln-run: the artifacts' PTX and
# cubins compress 8-fold with xz -3, 4-fold with gzip). On the GPU machine:
#   tar -xJf DIR.tar.xz && DIR/run_gpu_cases.sh DIR LOGDIR
# (KILN_JOBS cases at once; by default half the cores, at most 8).
#   tests/fuzz/graph/make_gpu_bundle.sh DIR N [SEED [FIRST]]
# SEED defaults to the time; graph S:I is the same as in the CPU fuzzer.
# Graphs S:FIRST.. of one seed in several bundles (FIRST = 0, N, 2N...) are
# checked as one. Nearly all the time (about 2.5 s a graph on two idle
# cores) is kilnc's NVRTC compiles, a few tenths of a second a kernel.
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
rm -rf "${out:?}"/* "${out}.tar.xz"
status=0 start="$(date +%s)"
/usr/bin/python3 tests/fuzz/graph/graph_fuzz.py bundle --bin "${KILN_BIN}" --seed "${seed}" \
  --first "${first}" --count "${count}" --out "${out}" || status=1
cp "$(readlink -f "${KILN_BIN}/kiln-run")" tests/ops/run_gpu_cases.sh "${out}/"
seconds=$(($(date +%s) - start))
echo "built in ${seconds} s, $(awk "BEGIN { printf \"%.1f\", ${seconds} / ${count} }") s a graph"
# xz -3: a fifth of the default -6's time for 38% more bytes.
XZ_OPT="${XZ_OPT:--3}" tar -cJf "${out}.tar.xz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "wrote ${out}.tar.xz ($(du -m "${out}.tar.xz" | cut -f1) MiB, seed ${seed}); on the GPU machine:" \
  "tar -xJf $(basename "${out}").tar.xz && $(basename "${out}")/run_gpu_cases.sh $(basename "${out}") LOGDIR"
exit "${status}"
