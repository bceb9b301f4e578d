#!/bin/bash
# Runs the GPU test binary against the CPU stand-in driver given as $2:
# every test must run (none skipped) and pass.
set -uo pipefail
binary="$1"
export KILN_LIBCUDA_PATH="$(pwd)/$2"
output="$("${binary}" 2>&1)"
status=$?
echo "${output}"
if [[ ${status} -ne 0 ]]; then
  echo "GPU tests failed against the stand-in driver (exit ${status})" >&2
  exit 1
fi
if grep -q "^\[  SKIPPED \] [1-9]" <<<"${output}"; then
  echo "tests were skipped although a (stand-in) driver was given" >&2
  exit 1
fi
exit 0
