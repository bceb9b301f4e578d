#!/bin/bash
# The README's tutorial as a test (run_tutorial.py): its blocks run in order
# in a fresh folder, the tools on the PATH, kernels compiled afresh.
#   tutorial_test.sh README RUN_TUTORIAL TOOL...
set -euo pipefail
readme="$1"
runner="$2"
shift 2
bin="${TEST_TMPDIR}/bin"
mkdir -p "${bin}"
for tool in "$@"; do
  ln -sf "${PWD}/${tool}" "${bin}/$(basename "${tool}")"
done
export KILN_KERNEL_CACHE="${TEST_TMPDIR}/kernels"
exec python3 "${runner}" "${readme}" --root "${PWD}" --bin "${bin}" \
  --work "${TEST_TMPDIR}/work"
