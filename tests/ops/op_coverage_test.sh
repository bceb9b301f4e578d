#!/bin/bash
# Runs the op-coverage suite (op_coverage.py) inside bazel's test sandbox.
set -euo pipefail
exec python3 tests/ops/op_coverage.py \
  --kilnc tools/kilnc/kilnc \
  --kiln-opt tools/kiln-opt/kiln-opt \
  --registered-ops tests/ops/registered_ops \
  --models tests/ops/models \
  --ptxas "${PTXAS:-/usr/local/cuda/bin/ptxas}" \
  --work "${TEST_TMPDIR:-$(mktemp -d)}" \
  ${XML_OUTPUT_FILE:+--junit "${XML_OUTPUT_FILE}"}
