#!/bin/bash
# The ONNX sample on the GPU machine, inside the bundle of make_bundle.sh:
#   run.sh LOGDIR
# Trains the imported PyTorch MLP 50 steps with kiln-run from the ONNX
# weights on the fixed batch (SGD lr 0.1, as export_mlp.py trained it in
# PyTorch) and compares the 50 losses with PyTorch's.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
./kiln-run mlp.kiln --steps 50 --inputs batch.safetensors --lr 0.1 \
  --resume initial.safetensors --log-every 1 >"${logs}/onnx_mlp_kiln_run.log" 2>&1 ||
  { echo "FAIL onnx_mlp: kiln-run failed (${logs}/onnx_mlp_kiln_run.log)"; exit 1; }
python3 compare_losses.py torch_losses.txt "${logs}/onnx_mlp_kiln_run.log" \
  | tee "${logs}/onnx_mlp_compare.log"
grep -q '^PASS' "${logs}/onnx_mlp_compare.log"
