#!/bin/bash
# Runs on the GPU machine what make_bundle.sh built:
#   run.sh LOGDIR [STEPS] [LR]
# kiln-run trains mlp.kiln STEPS steps (default 60) on batch.safetensors;
# the C, CMake (the C and the C++ API, the latter also through a dataset
# file and DeviceBatchLoader) and Rust consumers train the same
# artifact with the same seed on the same batch through the installed SDK
# and must print kiln-run's loss at every step; the Python consumer runs the
# forward entry and one step. Prints one line per consumer and "N failures"; exits 1 on any.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="$(realpath -m "$1")" steps="${2:-60}" lr="${3:-0.05}"
mkdir -p "${logs}"
cd "${here}" || exit 1
failures=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader \
  >"${logs}/gpu.txt" 2>&1
echo "commit $(cat COMMIT), $(cat "${logs}/gpu.txt")"

./kiln-run mlp.kiln --inputs batch.safetensors --steps "${steps}" \
  --lr "${lr}" --seed 0 --warmup 0 --log-every 1 >"${logs}/kiln_run.log" 2>&1 ||
  { echo "FAIL kiln-run: $(tail -3 "${logs}/kiln_run.log")"; exit 1; }
for consumer in c cmake cpp cpp_dataset rs; do
  log="${logs}/train_${consumer}.log"
  # The dataset consumer writes the batch to a file of its own first.
  data=()
  [[ ${consumer} == cpp_dataset ]] && data=("${logs}/batch.kilndata")
  if ! "./train_${consumer}" mlp.kiln "${data[@]}" "${steps}" "${lr}" >"${log}" 2>&1; then
    echo "FAIL ${consumer}: $(tail -3 "${log}")"
    failures=$((failures + 1))
  elif python3 mlp_batch.py compare "${logs}/kiln_run.log" "${log}" \
      >"${log%.log}.compare.txt" 2>&1; then
    echo "ok   ${consumer}: $(cat "${log%.log}.compare.txt")"
  else
    echo "FAIL ${consumer}: $(cat "${log%.log}.compare.txt")"
    failures=$((failures + 1))
  fi
done
if LD_LIBRARY_PATH="${here}/absl" python3 train.py prefix/lib/libkiln.so mlp.kiln >"${logs}/train_py.log" 2>&1
then
  echo "ok   python: $(tr '\n' ' ' <"${logs}/train_py.log")"
else
  echo "FAIL python: $(tail -3 "${logs}/train_py.log")"
  failures=$((failures + 1))
fi
echo "${failures} failures"
[[ ${failures} -eq 0 ]]
