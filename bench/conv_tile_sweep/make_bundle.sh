#!/bin/bash
# Builds the convolution tile sweep into DIR (default .gpu-bundle/conv_sweep):
# the forward, input-gradient and filter-gradient passes of five ResNet-50
# layers (gen_models.py: functions f, di, dw; bf16, N = 32, channels last),
# once with the planner's choice (NAME.auto.kiln, NAME.auto.stats) and once
# per tile of TILES, forced by an edit of the IR: kilnc --emit=mlir plans
# the model, kiln-opt --kiln-select-kernels records the planner's kernels,
# every #kiln_cuda.conv is replaced by the tile's, and kilnc --planned
# checks and compiles the result (NAME.TILE.mlir beside NAME.TILE.kiln).
# A tile is BM,BN,BK,WARPS_M,WARPS_N,STAGES,BLOCKS_PER_SM,SPLIT (WARPS_M =
# WARPS_N = 0: the wgmma kernel; prefixed by tma: the wgmma kernel on TMA
# copies, STAGES its own). On the GPU machine (python3 with PyTorch for
# the random inputs):
#   DIR/run.sh > sweep.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.gpu-bundle/conv_sweep}"
TILES="${TILES:-128,64,32,2,2,4,3,1 128,64,32,4,2,4,2,1 128,128,32,2,4,4,2,1 256,64,32,4,2,3,1,1 128,64,64,2,2,3,2,1 128,64,64,4,2,3,2,1 64,64,32,2,2,4,4,1 256,128,32,4,2,3,1,1}"
bazel build //tools/kilnc //tools/kiln-opt //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"

# The #kiln_cuda.conv of tile $1.
conv_attr() {
  local kind="mma" tile="$1"
  if [[ "${tile}" == tma:* ]]; then
    kind="tma"
    tile="${tile#tma:}"
  fi
  local bm bn bk wm wn stages blocks split warps=""
  IFS=, read -r bm bn bk wm wn stages blocks split <<<"${tile}"
  if [ "${wm}" = 0 ] && [ "${wn}" = 0 ]; then
    [ "${kind}" = tma ] || kind="wgmma"
  else
    warps=", warps = ${wm}x${wn}"
  fi
  echo "#kiln_cuda.conv<${kind}, tile = ${bm}x${bn}x${bk}${warps}, stages = ${stages}, blocks_per_sm = ${blocks}, split = ${split}>"
}

rm -rf "${out}"
mkdir -p "${out}"
python3 bench/conv_tile_sweep/gen_models.py "${out}"
for model in "${out}"/*.mlir; do
  shape="$(basename "${model}" .mlir)"
  "${bin}/tools/kilnc/kilnc" "${model}" --inference --function f --emit=mlir \
    -o "${out}/${shape}.planned.mlir"
  "${bin}/tools/kiln-opt/kiln-opt" "${out}/${shape}.planned.mlir" \
    --kiln-select-kernels -o "${out}/${shape}.auto.mlir"
  "${bin}/tools/kilnc/kilnc" "${out}/${shape}.auto.mlir" --planned --stats \
    -o "${out}/${shape}.auto.kiln" >"${out}/${shape}.auto.stats" 2>&1
  for tile in ${TILES}; do
    name="${out}/${shape}.${tile//[,:]/_}"
    sed -E "s/#kiln_cuda\.conv<[^>]*>/$(conv_attr "${tile}")/g" \
      "${out}/${shape}.auto.mlir" >"${name}.mlir"
    "${bin}/tools/kilnc/kilnc" "${name}.mlir" --planned -o "${name}.kiln"
  done
done
rm -f "${out}"/*.planned.mlir
cp "${bin}/tools/kiln-run/kiln-run" bench/conv_tile_sweep/run.sh bench/conv_tile_sweep/inputs.py \
  bench/bench_harness.py "${out}/"
