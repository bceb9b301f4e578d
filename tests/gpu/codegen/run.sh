#!/bin/bash
# Runs on the GPU machine, from inside the bundle made by make_bundle.sh:
#   run.sh LOGDIR
# Checks every op model's outputs against the f64 reference with tolerances
# that fit its dtypes, then trains the samples. Prints one PASS/FAIL line each
# and a summary; exits non-zero if anything failed.
#
# KILN_SANITIZER=memcheck|racecheck|synccheck|initcheck runs every GPU
# process under compute-sanitizer (any error fails the check), with the
# training runs cut to a few steps and one seed, whose quality goals are then
# not checked. KILN_JOBS runs that many op cases at once (default 1).
# ONLY=REGEX runs only the checks whose names (as the PASS/FAIL lines print
# them) match the extended regular expression, e.g. ONLY='^ops:(attention|gemm)'
# or ONLY='sine_block'.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
kiln_run=./kiln-run train_gpu=./train_gpu
train_steps=1000 seeds="1 2 3"
if [[ -n "${KILN_SANITIZER:-}" ]]; then
  sanitize="${PWD}/sanitized.sh ${KILN_SANITIZER}"
  for tool in kiln-run train_gpu; do
    printf '#!/bin/sh\nexec %s %s/%s "$@"\n' "${sanitize}" "${PWD}" "${tool}" \
      >"${logs}/sanitized-${tool}"
    chmod +x "${logs}/sanitized-${tool}"
  done
  kiln_run="${logs}/sanitized-kiln-run" train_gpu="${logs}/sanitized-train_gpu"
  train_steps=20 seeds=1
fi
passed=0
failed=0
wanted() { # name
  [[ -z "${ONLY:-}" ]] || [[ "$1" =~ ${ONLY} ]]
}
record() { # name status
  if [[ $2 -eq 0 ]]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
# rtol atol per model: f32 results against f64, bf16 results at bf16 precision.
declare -A rtol=([pointwise]=1e-2 [gather]=1e-6 [reductions]=1e-4 [reductions_bf16]=2e-2
                  [attention]=2e-2 [attention_grad]=2e-2 [attention_items]=2e-2 [attention_pairs]=2e-2
                  [gemm]=2e-2 [gemm_wgmma]=2e-2 [gemm_wgmma_notma]=2e-2
                  [gemm_tma]=2e-2 [attention_layouts]=1e-3 [matvec]=1e-2 [rope]=1e-2)
declare -A atol=([pointwise]=1e-2 [gather]=1e-6 [reductions]=1e-5 [reductions_bf16]=2e-2
                  [attention]=1e-2 [attention_grad]=1e-2 [attention_items]=1e-2 [attention_pairs]=1e-2
                  [gemm]=2e-2 [gemm_wgmma]=2e-2 [gemm_wgmma_notma]=2e-2
                  [gemm_tma]=2e-2 [attention_layouts]=1e-4 [matvec]=1e-2 [rope]=1e-2)
for artifact in *.kiln; do
  name="${artifact%.kiln}"
  [[ -f "${name}.expected.safetensors" ]] || continue
  wanted "ops:${name}" || continue
  # Variants (NAME_cluster, NAME_per_item, NAME_fused, NAME_pingpong,
  # NAME_cooperative, NAME_tmastore) take their model's tolerances.
  model="${name}"
  for suffix in _cluster _per_item _fused _pingpong _cooperative _tmastore; do
    model="${model%"${suffix}"}"
  done
  "${kiln_run}" "${artifact}" --entry forward --inputs "${name}.inputs.safetensors" \
    --check "${name}.expected.safetensors" --rtol "${rtol[$model]:-1e-4}" \
    --atol "${atol[$model]:-1e-5}" >"${logs}/${name}.log" 2>&1
  record "ops:${name}" $?
done
# One optimizer update on random state (make_update_case.py) against kiln-ref
# f64: parameters, master weights and optimizer state.
for case in update_*.kiln; do
  name="${case%.kiln}"
  wanted "${name}" || continue
  tol="1e-4 1e-5"
  [[ "${name}" == *bf16 ]] && tol="1e-2 1e-3"
  read -r steps lr <"${name}.run"
  "${kiln_run}" "${case}" --resume "${name}.resume.safetensors" --steps "${steps}" \
    --inputs "${name}.batch.safetensors" --lr "${lr}" \
    --checkpoint "${logs}/${name}.after.safetensors" >"${logs}/${name}.log" 2>&1 &&
    python3 compare_checkpoint.py "${name}.reference.safetensors" "${logs}/${name}.after.safetensors" \
      ${tol} >>"${logs}/${name}.log" 2>&1
  record "${name}" $?
done
# The samples' goal: held-out MSE below 0.04 within 1000 steps, seeds 1-3.
goal=(--expect-mse-below 0.04)
[[ -n "${KILN_SANITIZER:-}" ]] && goal=()
for seed in ${seeds}; do
  for run in "sine_block sine" "sine_block_bf16 sine" "mlp regression"; do
    set -- ${run}
    wanted "train:$1:seed${seed}" || continue
    "${train_gpu}" --model "$1.kiln" --task "$2" --steps "${train_steps}" --seed "${seed}" \
      "${goal[@]}" >"${logs}/train_$1_seed${seed}.log" 2>&1
    record "train:$1:seed${seed}" $?
  done
done
# The same models trained through kiln-run on a dataset file (three data
# orders and initialisations), then evaluated on fresh held-out data through
# kiln-run's forward entry (peak learning rates as in samples/data/sine_task.cc).
for run in "sine_block sine 0.04 3e-3" "mlp regression 0.04 1e-2"; do
  set -- ${run}
  for seed in ${seeds}; do
    wanted "kiln-run train:$1:seed${seed}" || continue
    log="${logs}/kiln_run_train_$1_seed${seed}.log"
    "${kiln_run}" "$1.kiln" --steps "${train_steps}" --dataset "$2.kilndata" --batch-fields x,y \
      --lr "$4" --schedule cosine --warmup 50 --seed "${seed}" \
      --checkpoint "${logs}/$1.trained.safetensors" >"${log}" 2>&1 &&
      { [[ -n "${KILN_SANITIZER:-}" ]] ||
        { python3 eval_kiln_run.py "$1.kiln" "${logs}/$1.trained.safetensors" "$2" "$(mktemp -d)" \
            >>"${log}" 2>&1 &&
          awk -v limit="$3" '/held-out MSE/ { found = 1; ok = ($NF < limit) } END { exit !(found && ok) }' \
            "${log}"; }; }
    record "kiln-run train:$1:seed${seed}" $?
  done
done
# The gradient statistics as TensorBoard scalars (40 steps, logged every 10),
# read back with TensorBoard's own reader where it is installed.
if ! wanted "kiln-run:tensorboard_grad_stats"; then
  :
elif python3 -c 'import tensorboard' 2>/dev/null; then
  "${kiln_run}" mlp_grad_stats.kiln --steps 40 --dataset regression.kilndata \
    --batch-fields x,y --lr 1e-2 --log-every 10 --log-dir "${logs}/tensorboard" \
    >"${logs}/tensorboard_grad_stats.log" 2>&1 &&
    python3 check_tensorboard.py "${logs}/tensorboard" --min-events 4 \
      --expect-tags loss,learning_rate,grad/global_norm,grad/max_abs,grad/nonfinite_count \
      >>"${logs}/tensorboard_grad_stats.log" 2>&1
  record "kiln-run:tensorboard_grad_stats" $?
else
  echo "tensorboard not installed: the gradient statistics' event file not read back"
fi
# Every op's forward and every parameter's gradient in three modes against
# f64 (tests/ops: the op-coverage models, inputs drawn under the bundle's seed).
echo "ops: inputs drawn with seed $(cat ops/SEED)"
while read -r status name rest; do
  case "${status}" in
    PASS) record "${name}" 0 ;;
    FAIL) record "${name} ${rest}" 1 ;;
  esac
done < <(KILN_RUN="$(realpath "${kiln_run}")" ONLY="${ONLY:-}" ops/run_gpu_cases.sh ops "${logs}/ops")
echo "${passed} passed, ${failed} failed" | tee "${logs}/summary.txt"
[[ ${failed} -eq 0 ]]
