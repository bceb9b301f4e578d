#!/bin/bash
# The main job: installs what is missing, builds kiln, compiles the
# sine-denoising transformer block with kilnc, and trains it for 1000 steps:
# on the GPU when this machine has one (samples/train_gpu, the runtime API),
# otherwise on the CPU reference (samples/train_reference), saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install_deps.sh
targets=(//tools/kilnc //tools/kiln-opt //samples:train_gpu //samples:train_reference)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
BIN="$(bazel info bazel-bin 2>/dev/null)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# AdamW with the settings the CPU reference trainer uses by default.
echo "== kilnc samples/sine_block.mlir -o sine.kiln --stats"
"${BIN}/tools/kilnc/kilnc" samples/sine_block.mlir -o "${work}/sine.kiln" \
  --train=adamw --beta2=0.99 --weight-decay=0 --clip-norm=1 --stats

if [[ -e /dev/nvidiactl ]] && ldconfig -p 2>/dev/null | grep -q libcuda.so.1; then
  echo "== training on the GPU"
  "${BIN}/samples/train_gpu" --model "${work}/sine.kiln" --task sine --steps 1000
else
  echo "== no NVIDIA GPU on this machine: training on the CPU reference instead"
  "${BIN}/samples/train_reference" --model samples/sine_block.mlir --task sine \
    --steps 1000
fi
