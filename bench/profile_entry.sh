#!/bin/bash
# Profiles bench artifacts under Nsight Compute, on the device, on the inputs
# run.py draws for them:
#   bench/profile_entry.sh attention D CAUSAL ENTRY [VARIANT...]
#     the attention kernels of one run of ENTRY (forward | fwdbwd) of
#     attention_b8h16t2048_dD[_causal] (CAUSAL 0 or 1) and of each
#     _VARIANT artifact (e.g. `pingpong`, `fused`), with the sections that
#     say what limits a warp-specialised kernel (as profile_gemm.sh);
#   bench/profile_entry.sh block [VARIANT...]
#     two train steps of the transformer block (and of each _VARIANT
#     artifact): every kernel's duration, summed per kernel family
#     (profile_kernels.py).
# Prints the reports to stdout.
set -euo pipefail
cd "$(dirname "$0")"
what=$1
shift
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

case "${what}" in
attention)
  d=$1 causal=$2 entry=$3
  shift 3
  read -r name inputs < <(python3 - "${d}" "${causal}" "${entry}" "${work}" <<'PY'
import sys
import types
import run
d, causal, entry, work = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3], sys.argv[4]
name = run.attention_model_name(d, causal)
_, paths = run.attention_data(types.SimpleNamespace(workdir=work), name, d)
print(name, paths[entry])
PY
)
  for artifact in "${name}" "${@/#/${name}_}"; do
    [[ -f "${artifact}.kiln" ]] || { echo "=== ${artifact}: no artifact"; continue; }
    echo "=== ${artifact} (${entry})"
    ncu --clock-control none -k regex:kiln_attention \
      --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section Occupancy --section SchedulerStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis \
      ./kiln-run "${artifact}.kiln" --entry "${entry}" --inputs "${inputs}" \
      --output "${work}/out.safetensors" 2>&1
  done
  ;;
block)
  # The parameters come from the artifact's initialisers (training takes no
  # --params); the batch is run.py's.
  read -r name inputs < <(python3 - "${work}" <<'PY'
import sys
import run
_, _, paths = run.block_params(sys.argv[1])
print(run.block_model_name(), paths["inputs"])
PY
)
  for artifact in "${name}" "${@/#/${name}_}"; do
    [[ -f "${artifact}.kiln" ]] || { echo "=== ${artifact}: no artifact"; continue; }
    echo "=== ${artifact} (two train steps)"
    ncu --clock-control none -k regex:kiln_ \
      --metrics gpu__time_duration.sum \
      ./kiln-run "${artifact}.kiln" --steps 2 --inputs "${inputs}" \
      >"${work}/ncu.txt" 2>&1 ||
      { tail -20 "${work}/ncu.txt"; continue; }
    python3 profile_kernels.py "${work}/ncu.txt"
  done
  ;;
*)
  echo "profile_entry.sh: attention D CAUSAL ENTRY [VARIANT...] | block [VARIANT...]" >&2
  exit 2
  ;;
esac
