#!/bin/bash
# Runs every test of a GPU bundle (made by tests/gpu/make_bundle.sh) on the
# GPU machine:
#
#   tests/gpu/run_bundle.sh <log dir>      # from the repository root:
#                                          # runs .gpu-bundle/
#   <bundle>/run_bundle.sh <log dir>       # the copy inside a bundle runs
#                                          # that bundle
#
# Writes <log dir>/<test>.log (and .xml for gtest binaries) plus
# summary.txt, prints the summary and exits non-zero if any test failed or
# if tests were skipped on a machine that has a GPU.
#
# KILN_SANITIZER=memcheck|racecheck|synccheck|initcheck runs every binary
# under compute-sanitizer; any error it reports fails the test. The tests
# that provoke a kernel fault on purpose are left out there.
set -uo pipefail

logs="${1:?usage: run_bundle.sh <log dir>}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
if [[ -f "${here}/BINARIES" ]]; then
  bundle="${here}"
else
  bundle="$(cd "${here}/../.." && pwd)/.gpu-bundle"
fi
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

sanitize=() gtest_filter=()
if [[ -n "${KILN_SANITIZER:-}" ]]; then
  sanitize=("${bundle}/sanitized.sh" "${KILN_SANITIZER}")
  gtest_filter=(--gtest_filter=-*KernelFault*)
  echo "under compute-sanitizer --tool ${KILN_SANITIZER}" >>"${summary}"
fi

failures=0
# record <name> <status> <passed> <failed> <skipped> <seconds>
record() {
  local name="$1" status="$2" passed="$3" failed="$4" skipped="$5" seconds="$6"
  local verdict=ok
  if [[ ${status} -ne 0 ]]; then
    verdict="FAILED (exit ${status})"
  elif [[ ${have_gpu} == 1 && ${skipped:-0} -gt 0 ]]; then
    verdict="FAILED (tests skipped on a machine with a GPU)"
  fi
  [[ ${verdict} != ok ]] && failures=$((failures + 1))
  printf '%-28s %s: %s passed, %s failed, %s skipped, %ss\n' "${name}" \
      "${verdict}" "${passed:-0}" "${failed:-0}" "${skipped:-0}" "${seconds}" >>"${summary}"
}

while read -r name; do
  [[ -z "${name}" ]] && continue
  log="${logs}/${name}.log"
  start=$(date +%s)
  (cd "${bundle}" && KILN_GPU_TEST_DATA="${bundle}" "${sanitize[@]}" "./${name}" \
      --gtest_output="xml:${logs}/${name}.xml" "${gtest_filter[@]}") >"${log}" 2>&1
  status=$?
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "${log}" | grep -oE '[0-9]+$' || echo 0)
  failed=$(grep -oE '^\[  FAILED  \] [0-9]+ test' "${log}" | grep -oE '[0-9]+' || echo 0)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+' "${log}" | grep -oE '[0-9]+$' || echo 0)
  # Tests of the stand-in driver's poses (an older device) skip on a GPU.
  skipped=$((skipped - $(grep -c 'needs the stand-in driver' "${log}")))
  record "${name}" "${status}" "${passed}" "${failed}" "${skipped}" $(( $(date +%s) - start ))
  grep -E '^\[  FAILED  \] [A-Za-z]' "${log}" | sort -u >>"${summary}"
done <"${bundle}/BINARIES"

if [[ -f "${bundle}/SCRIPTS" ]]; then
  while read -r script args; do
    [[ -z "${script}" ]] && continue
    name="${script%.sh}"
    log="${logs}/${name}.log"
    start=$(date +%s)
    # Under a sanitizer the script's kiln-run (an argument) runs through it.
    if [[ -n "${KILN_SANITIZER:-}" ]]; then
      printf '#!/bin/sh\nexec %s %s "$@"\n' "${sanitize[*]}" "${bundle}/kiln-run" \
        >"${logs}/sanitized-kiln-run"
      chmod +x "${logs}/sanitized-kiln-run"
      args="${args/.\/kiln-run/${logs}/sanitized-kiln-run}"
    fi
    # shellcheck disable=SC2086
    (cd "${bundle}" && "./${script}" ${args} "${logs}/${name}.work") >"${log}" 2>&1
    status=$?
    passed=$(grep -c '^ok ' "${log}")
    failed=$(grep -c '^FAIL ' "${log}")
    skipped=$(grep -c 'test skipped' "${log}")
    record "${name}" "${status}" "${passed}" "${failed}" "${skipped}" $(( $(date +%s) - start ))
    grep -E '^FAIL ' "${log}" >>"${summary}"
  done <"${bundle}/SCRIPTS"
fi

echo "tests failed: ${failures}" >>"${summary}"
cat "${summary}"
[[ ${failures} -eq 0 ]]
