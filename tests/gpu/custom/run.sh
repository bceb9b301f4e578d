#!/bin/bash
# Runs on the GPU machine, from inside the bundle made by make_bundle.sh:
#   run.sh LOGDIR
# The user kernels of samples/custom on the GPU:
#  - the backward against central differences of the forward
#    (check_custom.py, inputs drawn under the bundle's seed);
#  - the training step's loss and every parameter's gradient, through
#    autodiff and the user's backward, against the f64 reference of the same
#    model written in kiln ops;
#  - 1000 training steps (f32 and bf16 AdamW) after which the mean loss on
#    held-out data must be below a quarter of the initial parameters'.
# Prints one PASS/FAIL line each and a summary; exits non-zero if anything
# failed. KILN_SANITIZER=memcheck|racecheck|synccheck|initcheck runs every
# GPU process under compute-sanitizer (training cut to 20 steps, whose loss
# is then not judged).
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
kiln_run="${PWD}/kiln-run" steps=1000
if [[ -n "${KILN_SANITIZER:-}" ]]; then
  printf '#!/bin/sh\nexec %s %s %s/kiln-run "$@"\n' "${PWD}/sanitized.sh" "${KILN_SANITIZER}" \
    "${PWD}" >"${logs}/sanitized-kiln-run"
  chmod +x "${logs}/sanitized-kiln-run"
  kiln_run="${logs}/sanitized-kiln-run" steps=20
fi
passed=0 failed=0
record() { # name status
  if [[ $2 -eq 0 ]]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}

python3 check_custom.py "${kiln_run}" grad_check.kiln "${logs}/grad_check" "$(cat SEED)" \
  >"${logs}/grad_check.log" 2>&1
record "custom:backward_vs_central_differences" $?

"${kiln_run}" custom_sgd.kiln --entry forward_backward --params custom_sgd.params.safetensors \
  --inputs custom_sgd.inputs.safetensors --check custom_sgd.expected.safetensors \
  --rtol 1e-3 --atol 1e-4 >"${logs}/forward_backward.log" 2>&1
record "custom:forward_backward_vs_reference" $?

# mean_loss LOG: the mean loss of kiln-run's dataset evaluation in LOG.
mean_loss() {
  awk '/^evaluated / { for (i = 1; i < NF; ++i) if ($i == "loss") print $(i + 1) }' "$1"
}
for build in custom_adamw custom_adamw_bf16; do
  log="${logs}/train_${build}.log"
  eval_args=(--dataset heldout.kilndata --batch-fields x,y)
  "${kiln_run}" "${build}.kiln" "${eval_args[@]}" --seed 1 >"${log}" 2>&1 &&
    "${kiln_run}" "${build}.kiln" --steps "${steps}" --dataset regression.kilndata \
      --batch-fields x,y --lr 1e-2 --schedule cosine --warmup 50 --seed 1 \
      --checkpoint "${logs}/${build}.trained.safetensors" >>"${log}" 2>&1 &&
    "${kiln_run}" "${build}.kiln" "${eval_args[@]}" \
      --params "${logs}/${build}.trained.safetensors" >>"${log}" 2>&1 &&
    { [[ -n "${KILN_SANITIZER:-}" ]] ||
      mean_loss "${log}" | awk 'NR == 1 { before = $1 } NR == 2 { after = $1 }
        END { printf "held-out loss %g before training, %g after\n", before, after;
              exit !(NR == 2 && after < before / 4) }' >>"${log}"; }
  record "custom:train:${build}" $?
done
echo "${passed} passed, ${failed} failed" | tee "${logs}/summary.txt"
[[ ${failed} -eq 0 ]]
