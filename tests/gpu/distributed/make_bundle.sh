#!/bin/bash
# Builds, on this machine, the GPU check of data-parallel training into DIR
# (default .gpu-bundle/distributed):
#  - the sine block (samples/sine_block.mlir, f32 AdamW) and the 1024-wide
#    transformer block (bench/models/transformer_block_b8t1024c1024.mlir,
#    bf16 AdamW), each twice: with kilnc --data-parallel at the model's batch
#    per rank (sine 4, transformer 4), and without at the global batch of 2
#    ranks (sine 8, transformer 8), the single-GPU reference;
#  - their data (make_dataset --task sine, sequences of 32 and of 1024);
#  - kiln-run, the all-reduce probe, tests/gpu:data_parallel_test (static
#    binaries that run there) and the scripts.
# Then, on the GPU machine (NCCL from PyTorch's site-packages or
# KILN_NCCL_LIBRARY): DIR/run.sh LOGDIR (2 GPUs), DIR/run.sh LOGDIR 1 (the
# one-GPU variant: one rank through the real NCCL).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/distributed}"
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tools/kilnc >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
bazel build -c opt //tools/kiln-run //samples:make_dataset \
  //tests/gpu/distributed:allreduce_probe //tests/gpu:data_parallel_test >/dev/null
opt_bin="$(bazel info -c opt bazel-bin 2>/dev/null)"

# The sine block's batch is 4 (tensor<4x32x...>, heads tensor<4x4x32x...>).
sed -e 's/tensor<4x32x/tensor<8x32x/g' -e 's/tensor<4x4x32x/tensor<8x4x32x/g' \
  samples/sine_block.mlir >"${out}/sine_block_b8.mlir"
"${kilnc}" samples/sine_block.mlir --train=adamw --data-parallel --stats \
  -o "${out}/sine_dp.kiln" 2>"${out}/sine_dp.stats"
"${kilnc}" "${out}/sine_block_b8.mlir" --train=adamw \
  -o "${out}/sine_ref.kiln"
# The transformer block's batch is 8 (tensor<8x1024x...>, heads
# tensor<8x16x1024x...>): 4 per rank.
sed -e 's/tensor<8x1024x/tensor<4x1024x/g' -e 's/tensor<8x16x1024x/tensor<4x16x1024x/g' \
  bench/models/transformer_block_b8t1024c1024.mlir >"${out}/block_b4.mlir"
"${kilnc}" "${out}/block_b4.mlir" --train=adamw --precision=bf16 \
  --data-parallel --stats -o "${out}/block_dp.kiln" 2>"${out}/block_dp.stats"
"${kilnc}" bench/models/transformer_block_b8t1024c1024.mlir --train=adamw \
  --precision=bf16 -o "${out}/block_ref.kiln"
grep -A4 "data parallel: entry train_step" "${out}/sine_dp.stats" "${out}/block_dp.stats"

# 100 steps of global batches of 8, and more.
"${opt_bin}/samples/make_dataset" --task sine --records 2000 --seed 3 \
  --out "${out}/sine.kilndata"
"${opt_bin}/samples/make_dataset" --task sine --sine-length 1024 \
  --records 1000 --seed 4 --out "${out}/block.kilndata"
cp "${opt_bin}/tools/kiln-run/kiln-run" \
  "${opt_bin}/tests/gpu/distributed/allreduce_probe" \
  "${opt_bin}/tests/gpu/data_parallel_test" "${out}/"
cp tests/gpu/distributed/run.sh tests/gpu/distributed/compare_checkpoints.py \
  "${out}/"
git rev-parse HEAD >"${out}/COMMIT" 2>/dev/null || true
du -sh "${out}"
echo "bundle in ${out}"
