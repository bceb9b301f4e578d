#!/bin/bash
# Builds the convolution tile sweep into DIR (default .gpu-bundle/conv_sweep):
# the forward, input-gradient and filter-gradient passes of five ResNet-50
# layers (gen_models.py: functions f, di, dw; bf16, N = 32, channels last),
# once with the planner's choice (NAME.auto.kiln, NAME.auto.stats) and once
# per tile of TILES, forced through KILN_CONV_TILE (ConvPlan.cpp:
# BM,BN,BK,WARPS_M,WARPS_N,STAGES,BLOCKS_PER_SM,SPLIT), plus kiln-run.
# On the GPU machine (python3 with PyTorch for the random inputs):
#   DIR/run.sh > sweep.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.gpu-bundle/conv_sweep}"
TILES="${TILES:-128,64,32,2,2,4,3,1 128,64,32,4,2,4,2,1 128,128,32,2,4,4,2,1 256,64,32,4,2,3,1,1 128,64,64,2,2,3,2,1 128,64,64,4,2,3,2,1 64,64,32,2,2,4,4,1 256,128,32,4,2,3,1,1}"
bazel build //tools/kilnc //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
rm -rf "${out}"
mkdir -p "${out}"
python3 bench/conv_tile_sweep/gen_models.py "${out}"
for model in "${out}"/*.mlir; do
  shape="$(basename "${model}" .mlir)"
  "${bin}/tools/kilnc/kilnc" "${model}" --inference --function f --stats \
    -o "${out}/${shape}.auto.kiln" >"${out}/${shape}.auto.stats" 2>&1
  for tile in ${TILES}; do
    KILN_CONV_TILE="${tile}" "${bin}/tools/kilnc/kilnc" "${model}" --inference \
      --function f -o "${out}/${shape}.${tile//,/_}.kiln"
  done
done
cp "${bin}/tools/kiln-run/kiln-run" bench/conv_tile_sweep/run.sh bench/conv_tile_sweep/inputs.py \
  bench/bench_harness.py "${out}/"
