#!/bin/bash
# Runs the GPU test binary: it must exit 0. When it finds no CUDA driver,
# every test must have been skipped (none may claim to have passed).
set -uo pipefail
binary="$1"
output="$("${binary}" 2>&1)"
status=$?
echo "${output}"
if [[ ${status} -ne 0 ]]; then
  echo "GPU test binary failed (exit ${status})" >&2
  exit 1
fi
if grep -q "no CUDA driver: GPU test skipped" <<<"${output}"; then
  if grep -q "^\[  PASSED  \] [1-9]" <<<"${output}"; then
    echo "some tests passed without a CUDA driver: they did not skip" >&2
    exit 1
  fi
  if ! grep -q "^\[  SKIPPED \] [1-9]" <<<"${output}"; then
    echo "no test reported a skip" >&2
    exit 1
  fi
fi
exit 0
