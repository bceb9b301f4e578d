#!/bin/bash
# Profiles the GEMM artifacts of bench/ under Nsight Compute, on the device,
# one forward run each on the inputs run.py draws for them (gemm_inputs):
#   bench/profile_gemm.sh NAME M K N [VARIANT...]
# profiles NAME.kiln and each NAME_VARIANT.kiln (e.g. `cluster`) found
# beside run.py, with the sections that say what limits a persistent
# warp-specialised kernel: throughput, occupancy and cluster residency,
# scheduler and warp stalls. Prints the report to stdout.
set -euo pipefail
cd "$(dirname "$0")"
name=$1 m=$2 k=$3 n=$4
shift 4
work=$(mktemp -d)
inputs=$(python3 - "${name}" "${m}" "${k}" "${n}" "${work}" <<'PY'
import sys
import run
name, m, k, n, work = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
print(run.gemm_inputs(name, m, k, n, work)[0])
PY
)
for artifact in "${name}" "${@/#/${name}_}"; do
  [[ -f "${artifact}.kiln" ]] || { echo "=== ${artifact}: no artifact"; continue; }
  echo "=== ${artifact}"
  ncu --clock-control none -k regex:kiln_gemm \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section SchedulerStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis \
    ./kiln-run "${artifact}.kiln" --entry forward --inputs "${inputs}" \
    --output "${work}/out.safetensors" 2>&1
done
rm -rf "${work}"
