#!/bin/bash
# Runs one folder of ONNX's backend test data through the importer and the
# CPU reference: run_suite.sh RUNNER DATA_DIR MIN_PASS. Fails on any wrong
# answer or when fewer than MIN_PASS tests pass (the committed floor).
set -euo pipefail
runner="$1" data="$2" floor="$3"
if [[ ! -d "${data}" ]]; then
  echo "error: ${data} is missing: install libonnx-testdata (tools/install_deps.sh)" >&2
  exit 1
fi
"${runner}" --data "${data}" --min-pass "${floor}"
