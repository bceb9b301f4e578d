#!/bin/bash
# Runs torch_parity.py (PyTorch's ONNX exports through the CPU reference
# against PyTorch in f64) inside bazel's test sandbox, with Debian's
# python3-torch: run_torch_parity.sh KILN_OPT KILN_REF SCRIPT
set -euo pipefail
exec /usr/bin/python3 "$3" --kiln-opt "$1" --kiln-ref "$2" \
  --work "${TEST_TMPDIR:-$(mktemp -d)}/torch_parity"
