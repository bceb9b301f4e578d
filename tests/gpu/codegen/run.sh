#!/bin/bash
# Runs on the GPU machine, from inside the bundle made by make_bundle.sh:
#   run.sh LOGDIR
# Checks every op model's outputs against the f64 reference with tolerances
# that fit its dtypes, then trains the samples. Prints one PASS/FAIL line each
# and a summary; exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
passed=0
failed=0
record() { # name status
  if [[ $2 -eq 0 ]]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
# rtol atol per model: f32 results against f64, bf16 results at bf16 precision.
declare -A rtol=([pointwise]=1e-2 [gather]=1e-6 [reductions]=1e-4 [reductions_bf16]=2e-2
                  [attention]=2e-2 [gemm]=2e-2)
declare -A atol=([pointwise]=1e-2 [gather]=1e-6 [reductions]=1e-5 [reductions_bf16]=2e-2
                  [attention]=1e-2 [gemm]=2e-2)
for artifact in *.kiln; do
  name="${artifact%.kiln}"
  [[ -f "${name}.expected.safetensors" ]] || continue
  ./kiln-run "${artifact}" --entry forward --inputs "${name}.inputs.safetensors" \
    --check "${name}.expected.safetensors" --rtol "${rtol[$name]:-1e-4}" \
    --atol "${atol[$name]:-1e-5}" >"${logs}/${name}.log" 2>&1
  record "ops:${name}" $?
done
./train_gpu --model sine_block.kiln --task sine --steps 1000 --seed 1 \
  --expect-mse-below 0.055 >"${logs}/train_sine.log" 2>&1
record "train:sine_block" $?
./train_gpu --model sine_block_bf16.kiln --task sine --steps 1000 --seed 1 \
  --expect-mse-below 0.07 >"${logs}/train_sine_bf16.log" 2>&1
record "train:sine_block_bf16" $?
./train_gpu --model mlp.kiln --task regression --steps 1000 --seed 1 \
  --expect-mse-below 0.1 >"${logs}/train_mlp.log" 2>&1
record "train:mlp" $?
# The same models trained through kiln-run on a dataset file, then evaluated
# on fresh held-out data through kiln-run's forward entry.
for pair in "sine_block sine 0.055" "mlp regression 0.1"; do
  set -- ${pair}
  ./kiln-run "$1.kiln" --steps 1000 --dataset "$2.kilndata" --batch-fields x,y \
    --lr 3e-3 --schedule cosine --warmup 50 --seed 1 \
    --checkpoint "$1.trained.safetensors" >"${logs}/kiln_run_train_$1.log" 2>&1 &&
    python3 eval_kiln_run.py "$1.kiln" "$1.trained.safetensors" "$2" "$(mktemp -d)" \
      >>"${logs}/kiln_run_train_$1.log" 2>&1 &&
    awk -v limit="$3" '/held-out MSE/ { found = 1; ok = ($NF < limit) } END { exit !(found && ok) }' \
      "${logs}/kiln_run_train_$1.log"
  record "kiln-run train:$1" $?
done
echo "${passed} passed, ${failed} failed" | tee "${logs}/summary.txt"
[[ ${failed} -eq 0 ]]
