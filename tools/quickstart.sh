#!/bin/bash
# The main job: installs what is missing, builds the tools, and runs the
# sine-denoising sample through them.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install_deps.sh
bazel build //tools/kiln-opt >/dev/null 2>&1 || bazel build //tools/kiln-opt
BIN="$(bazel info bazel-bin 2>/dev/null)"

echo "== samples/sine_block.mlir: parsed, verified and printed by kiln-opt"
"${BIN}/tools/kiln-opt/kiln-opt" samples/sine_block.mlir

