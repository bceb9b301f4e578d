#!/bin/bash
# Runs on the GPU machine, from the folder make_gpu_cases.sh wrote:
#   run_gpu_cases.sh DIR LOGDIR
# Each case's entry on the GPU against its f64 reference, element by element:
# |out - expected| <= atol + rtol * |expected|, NaN never passes. Tolerances
# per mode: f32 storage against f64; tf32 (f32 storage, products of operands
# rounded to 10 bits of mantissa); bf16 and f16 storage (activations and
# gradients rounded to 8 and 11 bits of mantissa) against f64 of the same
# module. A model may name its own (make_gpu_cases.sh): `.tolerance` for the
# f32 modes (absolute atol; for tf32, each component the larger of it and
# the default), `.tf32-tolerance`, `.bf16-tolerance` and `.f16-tolerance`
# (else the bf16 one) for theirs, with atol relative to each output's
# largest magnitude (kiln-run --scaled-atol); a third field `gradients` makes
# the gradients share the largest gradient's magnitude
# (--shared-gradient-scale: a gradient whose terms cancel keeps their
# rounding).
# Prints PASS/FAIL per case (a FAIL names the tensors that missed, or the
# log's last lines) and "N passed, N failed"; exits non-zero on any
# failure. ONLY=REGEX runs the cases whose "ops:NAME" matches it alone;
# KILN_JOBS cases run at once (default: half the cores, at most 8).
set -uo pipefail
dir="$1" logs="$2"
mkdir -p "${logs}"
kiln_run="${KILN_RUN:-${dir}/kiln-run}"
declare -A rtol=([inference]=1e-4 [f32_sgd]=1e-4 [tf32_sgd]=5e-3 [bf16_adamw]=5e-2 [f16_adamw]=2e-2)
declare -A atol=([inference]=1e-5 [f32_sgd]=1e-5 [tf32_sgd]=1e-3 [bf16_adamw]=2e-2 [f16_adamw]=1e-2)
echo "seed $(cat "${dir}/SEED")"
# run_case ARTIFACT: runs one case; writes its PASS/FAIL line to
# LOGDIR/NAME.result.
run_case() {
  local artifact="$1" case name mode tolerance scaled own kind args
  case="${artifact%.kiln}"
  name="$(basename "${case}")"
  mode="${name##*.}"
  tolerance="${rtol[$mode]} ${atol[$mode]}"
  scaled=() own=()
  case "${mode}" in
    inference|f32_sgd) [[ -f "${case}.tolerance" ]] && tolerance="$(cat "${case}.tolerance")" ;;
    tf32_sgd) own=(tf32)
      [[ -f "${case}.tolerance" ]] && tolerance="$(echo "${tolerance} $(cat "${case}.tolerance")" |
        awk '{ print ($1 > $3 ? $1 : $3), ($2 > $4 ? $2 : $4) }')" ;;
    bf16_adamw) own=(bf16) ;;
    f16_adamw) own=(f16 bf16) ;;
  esac
  for kind in "${own[@]}"; do
    if [[ -f "${case}.${kind}-tolerance" ]]; then
      tolerance="$(cat "${case}.${kind}-tolerance")"
      scaled=(--scaled-atol)
      break
    fi
  done
  local case_rtol case_atol case_scale
  read -r case_rtol case_atol case_scale <<<"${tolerance}"
  [[ "${case_scale}" == gradients ]] && scaled+=(--shared-gradient-scale)
  args=(--entry "$(cat "${case}.entry")" --check "${case}.expected.safetensors"
        --rtol "${case_rtol}" --atol "${case_atol}" "${scaled[@]}")
  [[ -f "${case}.params.safetensors" ]] && args+=(--params "${case}.params.safetensors")
  [[ -f "${case}.inputs.safetensors" ]] && args+=(--inputs "${case}.inputs.safetensors")
  if "${kiln_run}" "${artifact}" "${args[@]}" >"${logs}/${name}.log" 2>&1; then
    echo "PASS ops:${name}" >"${logs}/${name}.result"
  else
    echo "FAIL ops:${name}: $(failure_of "${logs}/${name}.log")" >"${logs}/${name}.result"
  fi
}
# failure_of LOG: the check lines of the tensors that missed, else (an error
# before or instead of the check) the log's last 3 lines, on one line.
failure_of() {
  local missed
  missed="$(grep -E '^check [^ ]+: (MISMATCH|MISSING|SHAPE)' "$1")"
  if [[ -n "${missed}" ]]; then echo "${missed}"; else tail -n 3 "$1"; fi | tr '\n' ' '
}
# Cases are small and independent: each kiln-run holds a context of its own
# on the shared GPU, so the host's cores, not the GPU, bound how many help.
cores="$(nproc 2>/dev/null || echo 2)"
default_jobs=$((cores / 2)); ((default_jobs > 8)) && default_jobs=8; ((default_jobs < 1)) && default_jobs=1
jobs="${KILN_JOBS:-${default_jobs}}"
wanted() { # artifact
  [[ -z "${ONLY:-}" ]] || [[ "ops:$(basename "${1%.kiln}")" =~ ${ONLY} ]]
}
for artifact in "${dir}"/*.kiln; do
  wanted "${artifact}" || continue
  while [[ $(jobs -rp | wc -l) -ge ${jobs} ]]; do wait -n; done
  run_case "${artifact}" &
done
wait
passed=0 failed=0
for artifact in "${dir}"/*.kiln; do
  wanted "${artifact}" || continue
  name="$(basename "${artifact%.kiln}")"
  line="$(cat "${logs}/${name}.result" 2>/dev/null || echo "FAIL ops:${name}: no result")"
  echo "${line}"
  if [[ "${line}" == PASS* ]]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
