#!/bin/bash
# Runs every binary of .gpu-bundle/ (made by tests/gpu/make_bundle.sh) on the
# GPU machine, from the repository root:
#
#   tests/gpu/run_bundle.sh <log dir>
#
# Writes <log dir>/<binary>.log and .xml (gtest) per binary plus
# summary.txt, prints the summary and exits non-zero if any binary failed or
# if tests were skipped on a machine that has a GPU.
set -uo pipefail
cd "$(dirname "$0")/../.."

logs="${1:?usage: tests/gpu/run_bundle.sh <log dir>}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
bundle="$(pwd)/.gpu-bundle"
if [[ ! -f "${bundle}/BINARIES" ]]; then
  echo "run_bundle: no ${bundle}/BINARIES: run tests/gpu/make_bundle.sh first" >&2
  exit 2
fi

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"${logs}/nvidia-smi.txt" 2>&1; then
  have_gpu=1
fi

summary="${logs}/summary.txt"
{
  echo "bundle commit: $(cat "${bundle}/COMMIT" 2>/dev/null || echo unknown)"
  echo "host: $(uname -n), GPU visible: $([[ ${have_gpu} == 1 ]] && head -1 "${logs}/nvidia-smi.txt" || echo no)"
} >"${summary}"

failures=0
while read -r name; do
  [[ -z "${name}" ]] && continue
  log="${logs}/${name}.log"
  start=$(date +%s)
  (cd "${bundle}" && KILN_GPU_TEST_DATA="${bundle}" "./${name}" \
      --gtest_output="xml:${logs}/${name}.xml") >"${log}" 2>&1
  status=$?
  seconds=$(( $(date +%s) - start ))
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "${log}" | grep -oE '[0-9]+$' || echo 0)
  failed=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "${log}" | grep -oE '[0-9]+' || echo 0)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+' "${log}" | grep -oE '[0-9]+$' || echo 0)
  verdict=ok
  if [[ ${status} -ne 0 ]]; then
    verdict="FAILED (exit ${status})"
  elif [[ ${have_gpu} == 1 && ${skipped:-0} -gt 0 ]]; then
    verdict="FAILED (tests skipped on a machine with a GPU)"
  fi
  [[ ${verdict} != ok ]] && failures=$((failures + 1))
  printf '%-28s %s: %s passed, %s failed, %s skipped, %ss\n' "${name}" \
      "${verdict}" "${passed:-0}" "${failed:-0}" "${skipped:-0}" "${seconds}" >>"${summary}"
  grep -E '^\[  FAILED  \] [A-Za-z]' "${log}" | sort -u >>"${summary}"
done <"${bundle}/BINARIES"

echo "binaries failed: ${failures}" >>"${summary}"
cat "${summary}"
[[ ${failures} -eq 0 ]]
