#!/bin/bash
# Runs on the GPU machine, from inside the bundle made by make_bundle.sh:
#   run.sh LOGDIR
# Runs every ONNX backend test artifact's forward entry with kiln-run on its
# inputs and checks the outputs against ONNX's expected ones, with ONNX's
# backend tolerance |out - expected| <= atol + rtol * |expected| (rtol 1e-3,
# atol 1e-7; ONNX_RTOL and ONNX_ATOL override them). Prints PASS/FAIL/SKIP
# per test and the summary line; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
rtol="${ONNX_RTOL:-1e-3}" atol="${ONNX_ATOL:-1e-7}"
passed=0 failed=0 skipped=0
for artifact in *.kiln; do
  [[ -e "${artifact}" ]] || continue
  name="${artifact%.kiln}"
  # Some tests feed NaN and infinities on purpose (IsNaN, IsInf, casts).
  if ./kiln-run "${artifact}" --entry forward --inputs "${name}.inputs.safetensors" \
      --allow-nonfinite-inputs \
      --check "${name}.expected.safetensors" --rtol "${rtol}" --atol "${atol}" \
      >"${logs}/${name}.log" 2>&1; then
    passed=$((passed + 1)); echo "PASS ${name}"
  else
    failed=$((failed + 1)); echo "FAIL ${name}: $(tail -n 1 "${logs}/${name}.log")"
  fi
done
for skip in *.skipped; do
  [[ -e "${skip}" ]] || continue
  skipped=$((skipped + 1))
  echo "SKIP ${skip%.skipped}: $(grep -m1 error "${skip}")"
done
echo "onnx backend tests on the GPU: ${passed} passed, ${failed} failed," \
  "${skipped} skipped of $((passed + failed + skipped))"
((failed == 0))
