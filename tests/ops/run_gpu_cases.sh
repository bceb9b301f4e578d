#!/bin/bash
# Runs on the GPU machine, from the folder make_gpu_cases.sh wrote:
#   run_gpu_cases.sh DIR LOGDIR
# Each case's entry on the GPU against its f64 reference, element by element:
# |out - expected| <= atol + rtol * |expected|, NaN never passes. Tolerances
# per mode: f32 storage against f64, and bf16 storage (activations and
# gradients rounded to 8 bits of mantissa) against f64 of the same module;
# a model may name its own for the f32 modes (make_gpu_cases.sh).
# Prints PASS/FAIL per case and "N passed, N failed"; exits non-zero on any
# failure.
set -uo pipefail
dir="$1" logs="$2"
mkdir -p "${logs}"
kiln_run="${KILN_RUN:-${dir}/kiln-run}"
declare -A rtol=([inference]=1e-4 [f32_sgd]=1e-4 [bf16_adamw]=5e-2)
declare -A atol=([inference]=1e-5 [f32_sgd]=1e-5 [bf16_adamw]=2e-2)
passed=0 failed=0
echo "seed $(cat "${dir}/SEED")"
for artifact in "${dir}"/*.kiln; do
  case="${artifact%.kiln}"
  name="$(basename "${case}")"
  mode="${name##*.}"
  tolerance="${rtol[$mode]} ${atol[$mode]}"
  [[ -f "${case}.tolerance" && "${mode}" != bf16_adamw ]] && tolerance="$(cat "${case}.tolerance")"
  scaled=()
  if [[ -f "${case}.bf16-tolerance" && "${mode}" == bf16_adamw ]]; then
    tolerance="$(cat "${case}.bf16-tolerance")"
    scaled=(--scaled-atol)
  fi
  read -r case_rtol case_atol <<<"${tolerance}"
  args=(--entry "$(cat "${case}.entry")" --check "${case}.expected.safetensors"
        --rtol "${case_rtol}" --atol "${case_atol}" "${scaled[@]}")
  [[ -f "${case}.params.safetensors" ]] && args+=(--params "${case}.params.safetensors")
  [[ -f "${case}.inputs.safetensors" ]] && args+=(--inputs "${case}.inputs.safetensors")
  if "${kiln_run}" "${artifact}" "${args[@]}" >"${logs}/${name}.log" 2>&1; then
    passed=$((passed + 1)); echo "PASS ops:${name}"
  else
    failed=$((failed + 1)); echo "FAIL ops:${name}: $(tail -n 3 "${logs}/${name}.log" | tr '\n' ' ')"
  fi
done
echo "${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
