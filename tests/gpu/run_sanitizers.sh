#!/bin/bash
# Runs the GPU suite under each of compute-sanitizer's tools, on the GPU
# machine, from the repository root (bundles under .gpu-bundle/):
#
#   tests/gpu/run_sanitizers.sh LOGDIR [TOOL...]   # default: all four
#
# Each tool runs, at the same time as the others, every bundle that is there:
# the runtime bundle (run_bundle.sh), codegen/run.sh, reliability/run.sh and
# custom/run.sh with KILN_SANITIZER set (reduced step counts), and the rnn, conv and
# attention op cases (run_gpu_cases.sh; made small with MODELS=..., see
# tests/gpu/SANITIZERS.md) through a sanitized kiln-run. Writes
# LOGDIR/TOOL/BUNDLE/ and LOGDIR/summary.txt: per tool and bundle the checks
# passed and failed, the sanitized processes and the errors they reported.
# Exits non-zero on any failure or error.
set -uo pipefail
logs="${1:?usage: run_sanitizers.sh LOGDIR [TOOL...]}"
shift
tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(memcheck racecheck synccheck initcheck)
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
root="$(cd "$(dirname "$0")/../.." && pwd)"
bundles="${root}/.gpu-bundle"
jobs="${KILN_JOBS:-3}"
# KILN_SANITIZER_BUNDLES narrows the run to some of the bundles.
wanted=" ${KILN_SANITIZER_BUNDLES:-runtime codegen reliability custom rnn conv attention} "

run_tool() { # TOOL
  local tool="$1" dir="${logs}/$1"
  mkdir -p "${dir}"
  if [[ -f "${bundles}/BINARIES" && "${wanted}" == *" runtime "* ]]; then
    KILN_SANITIZER="${tool}" "${bundles}/run_bundle.sh" "${dir}/runtime" >"${dir}/runtime.txt" 2>&1
    echo "runtime exit $?" >>"${dir}/runtime.txt"
  fi
  for bundle in codegen reliability custom; do
    [[ -x "${bundles}/${bundle}/run.sh" && "${wanted}" == *" ${bundle} "* ]] || continue
    KILN_SANITIZER="${tool}" KILN_JOBS="${jobs}" OOC_DIR="/tmp/kiln-ooc-${tool}" \
      "${bundles}/${bundle}/run.sh" "${dir}/${bundle}" >"${dir}/${bundle}.txt" 2>&1
    echo "${bundle} exit $?" >>"${dir}/${bundle}.txt"
  done
  for bundle in rnn conv attention; do
    [[ -x "${bundles}/${bundle}/run_gpu_cases.sh" && "${wanted}" == *" ${bundle} "* ]] || continue
    local wrapper="${dir}/sanitized-kiln-run-${bundle}"
    printf '#!/bin/sh\nexec %s %s %s "$@"\n' "${root}/tests/gpu/sanitized.sh" "${tool}" \
      "${bundles}/${bundle}/kiln-run" >"${wrapper}"
    chmod +x "${wrapper}"
    KILN_RUN="${wrapper}" KILN_JOBS="${jobs}" "${bundles}/${bundle}/run_gpu_cases.sh" \
      "${bundles}/${bundle}" "${dir}/${bundle}" >"${dir}/${bundle}.txt" 2>&1
    echo "${bundle} exit $?" >>"${dir}/${bundle}.txt"
  done
}

start=$(date +%s)
pids=()
for tool in "${tools[@]}"; do
  run_tool "${tool}" &
  pids+=($!)
done
# KILN_SANITIZER_TIMEOUT=SECONDS stops what still runs then (the summary
# says so), so that a device lease always gets its logs.
timed_out=0
if [[ -n "${KILN_SANITIZER_TIMEOUT:-}" ]]; then
  while kill -0 "${pids[@]}" 2>/dev/null &&
      (( $(date +%s) - start < KILN_SANITIZER_TIMEOUT )); do
    sleep 2
  done
  if kill -0 "${pids[@]}" 2>/dev/null; then
    timed_out=1
    pkill -f compute-sanitizer
    sleep 2
    kill "${pids[@]}" 2>/dev/null
  fi
fi
wait

summary="${logs}/summary.txt"
{
  echo "bundles of commit $(cat "${bundles}/COMMIT" 2>/dev/null || echo unknown); $(compute-sanitizer --version | tail -1)"
  echo "wall time: $(($(date +%s) - start)) s"
  [[ ${timed_out} == 1 ]] && echo "TIMED OUT after ${KILN_SANITIZER_TIMEOUT} s: what ran is below"
  for tool in "${tools[@]}"; do
    for result in "${logs}/${tool}"/*.txt; do
      bundle="$(basename "${result}" .txt)"
      # Every sanitized process ends with one summary line: "ERROR SUMMARY:
      # N errors", or racecheck's "RACECHECK SUMMARY: H hazards displayed
      # (N errors, W warnings)".
      read -r processes errors warnings < <(grep -rhE "(ERROR|RACECHECK) SUMMARY" \
          "${logs}/${tool}/${bundle}" 2>/dev/null | awk '
        { n++ }
        /ERROR SUMMARY/ { e += $4 }
        /RACECHECK SUMMARY/ { sub(/.*\(/, ""); e += $1; w += $3 }
        END { print n + 0, e + 0, w + 0 }')
      printf '%-10s %-12s %s; %s sanitized processes, %s errors, %s warnings\n' "${tool}" \
        "${bundle}" "$(grep -E 'exit [0-9]+$' "${result}" | tail -1)" "${processes}" "${errors}" \
        "${warnings}"
    done
  done
} >"${summary}"
cat "${summary}"
! grep -qE 'exit [1-9]|[1-9][0-9]* errors,|TIMED OUT' "${summary}"
