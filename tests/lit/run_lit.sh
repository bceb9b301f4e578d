#!/bin/bash
# Runs LLVM's lit (shipped by Debian's llvm-19-tools) over tests/lit.
set -euo pipefail
exec python3 "${TEST_SRCDIR}/llvm/build/utils/lit/lit.py" -v \
  --xunit-xml-output "${XML_OUTPUT_FILE:-${TEST_TMPDIR}/lit.xml}" \
  "${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/lit" "$@"
