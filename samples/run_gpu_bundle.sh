#!/bin/bash
# Runs on the GPU machine, from inside the bundle that
# samples/make_gpu_bundle.sh builds (it is copied there as run.sh):
#   run.sh LOGDIR
# For each token sample (the classifier, the byte-level transformer language
# model, then the recurrent language models byte_lm_lstm and byte_lm_slstm):
#  1. kiln-run trains it from its dataset (f32, then bf16 storage), and
#     kiln-run evaluates the checkpoint on the held-out data with the
#     dropout-free artifact: the classifier's accuracy, the language model's
#     bits per byte (loss in nats / ln 2);
#  2. train_transformer (the runtime API) does the same in one program;
#  3. compare_losses.py trains the dropout-free model for 50 steps in kiln
#     (f32 and bf16) and in PyTorch from the same parameters on the same
#     batches and bounds the per-step relative difference (f32) by 1e-3,
#     also against the first 3 steps of the CPU reference (train_reference);
#     for the recurrent models compare_rnn_lm.py instead trains kiln (f32 and
#     bf16) and PyTorch (kiln_rnn.py's kiln.rnn) for the whole schedule in
#     file order from the same parameters and bounds the relative difference
#     of the held-out bits per byte (f32) by 2%.
# The recurrent models have no dropout: their artifacts evaluate themselves.
# Then the digits CNN (digits_cnn): kiln-run trains it (f32, then bf16) and
# evaluates the checkpoint with digits_cnn_eval.kiln (the held-out split as
# one batch, batch norm on the running statistics): its accuracy must exceed
# 0.98; train_digits does the same in one program; compare_digits.py trains
# it in kiln (f32 and bf16) and in PyTorch in file order from the same
# parameters, bounds the per-step relative difference of the first 30 steps'
# losses (f32) by 1e-3, also against the CPU reference's warm-up steps, and
# the difference of the held-out accuracies by 0.02.
# A sample that make_gpu_bundle.sh left out (NAME.skipped: kilnc refused it)
# is reported as SKIP with kilnc's diagnostic.
# Prints one PASS/FAIL line per run and a summary; exits non-zero if any
# failed. Every run's output is in LOGDIR. SAMPLES="a b" runs only those.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
passed=0
failed=0
skipped=0
record() { # name status
  if [[ $2 -eq 0 ]]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
for packed in *.gz; do
  [[ -e "${packed}" && ! -e "${packed%.gz}" ]] && gzip -dc "${packed}" >"${packed%.gz}"
done
seed="$(cat SEED)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"${logs}/gpu.txt" 2>&1
cat COMMIT >>"${logs}/gpu.txt"

# The value of output NAME in kiln-run's evaluation line ("... loss 0.12 ...").
metric() { # log name
  awk -v name="$2" '/^evaluated / { for (i = 1; i < NF; ++i) if ($i == name) v = $(i + 1) } END { print v }' "$1"
}

# sample data fields steps lr warmup metric bound (accuracy: above; bits: below)
runs=(
  "transformer_classifier classifier tokens,labels,dropout_offset 1500 1e-3 100 accuracy 0.9"
  "byte_lm lm tokens,targets,dropout_offset 2000 2e-3 100 bits 3.0"
  "byte_lm_lstm lm tokens,targets 600 3e-3 50 bits 2.6"
  "byte_lm_slstm lm tokens,targets 600 3e-3 50 bits 2.6"
)
for run in "${runs[@]}"; do
  read -r sample data fields steps lr warmup what bound <<<"${run}"
  [[ -n "${SAMPLES:-}" && " ${SAMPLES} " != *" ${sample} "* ]] && continue
  if [[ -e "${sample}.skipped" ]]; then
    skipped=$((skipped + 1))
    echo "SKIP ${sample}: $(grep -m1 error "${sample}.skipped")"
    cp "${sample}.skipped" "${logs}/"
    continue
  fi
  # The evaluation artifact: the dropout-free copy where there is one.
  nodrop=_nodrop
  [[ -e "${sample}_nodrop.kiln" ]] || nodrop=""
  schedule=(--lr "${lr}" --schedule cosine --warmup "${warmup}" --seed "${seed}")
  for precision in f32 bf16; do
    suffix=""
    [[ "${precision}" == bf16 ]] && suffix=_bf16
    log="${logs}/${sample}_kiln_run_${precision}.log"
    ckpt="${logs}/${sample}_${precision}.safetensors"
    ./kiln-run "${sample}${suffix}.kiln" --steps "${steps}" --dataset "${data}_train.kilndata" \
      --batch-fields "${fields}" "${schedule[@]}" --checkpoint "${ckpt}" >"${log}" 2>&1 &&
      ./kiln-run "${sample}${nodrop}${suffix}.kiln" --params "${ckpt}" \
        --dataset "${data}_heldout.kilndata" --batch-fields "${fields}" >>"${log}" 2>&1
    status=$?
    loss="$(metric "${log}" loss)"
    if [[ ${status} -eq 0 && -n "${loss}" ]]; then
      if [[ "${what}" == accuracy ]]; then
        value="$(metric "${log}" accuracy)"
        awk -v v="${value}" -v b="${bound}" 'BEGIN { exit !(v > b) }' || status=1
        note="held-out accuracy ${value} (bound > ${bound}), loss ${loss}"
      else
        value="$(awk -v l="${loss}" 'BEGIN { printf "%.4f", l / log(2) }')"
        awk -v v="${value}" -v b="${bound}" 'BEGIN { exit !(v < b) }' || status=1
        note="held-out ${value} bits per byte (bound < ${bound}), loss ${loss} nats"
      fi
    else
      status=1
      note="see ${log}"
    fi
    echo "${note}" | tee -a "${log}"
    record "kiln-run:${sample}:${precision}" "${status}"
  done

  expect=(--expect-accuracy-above "${bound}")
  [[ "${what}" == bits ]] && expect=(--expect-bits-below "${bound}")
  for precision in f32 bf16; do
    suffix=""
    [[ "${precision}" == bf16 ]] && suffix=_bf16
    log="${logs}/${sample}_train_transformer_${precision}.log"
    ./train_transformer --model "${sample}${suffix}.kiln" \
      --eval-model "${sample}${nodrop}${suffix}.kiln" --train "${data}_train.kilndata" \
      --heldout "${data}_heldout.kilndata" --steps "${steps}" --lr "${lr}" \
      --warmup "${warmup}" --seed "${seed}" "${expect[@]}" >"${log}" 2>&1
    status=$?
    grep -E '^held-out' "${log}"
    record "train_transformer:${sample}:${precision}" "${status}"
  done

  log="${logs}/${sample}_compare_torch.log"
  if [[ -z "${nodrop}" ]]; then
    python3 compare_rnn_lm.py --model "${sample}.mlir" --artifact "${sample}.kiln" \
      --bf16-artifact "${sample}_bf16.kiln" --train "${data}_train.kilndata" \
      --heldout "${data}_heldout.kilndata" --params "${sample}.params.safetensors" \
      --expected "${sample}.expected.safetensors" --reference-log "${sample}.reference.log" \
      --workdir "${logs}/${sample}_compare" --kiln-run ./kiln-run --steps "${steps}" \
      --lr "${lr}" --warmup "${warmup}" --seed "${seed}" --tolerance 0.02 >"${log}" 2>&1
    status=$?
    grep -E '^(PASS|FAIL|forward check|step [0-9]+: kiln-run|  (torch|kiln) )' "${log}"
    record "compare_torch:${sample}" "${status}"
    continue
  fi
  python3 compare_losses.py --model "${sample}_nodrop.mlir" --artifact "${sample}_nodrop.kiln" \
    --bf16-artifact "${sample}_nodrop_bf16.kiln" --data "${data}_train.kilndata" \
    --params "${sample}.params.safetensors" --expected "${sample}.expected.safetensors" \
    --reference-log "${sample}.reference.log" \
    --workdir "${logs}/${sample}_compare" --kiln-run ./kiln-run --steps 50 --lr "${lr}" \
    --warmup "${warmup}" --schedule-steps "${steps}" --seed "${seed}" --tolerance 1e-3 \
    >"${log}" 2>&1
  status=$?
  grep -E '^(PASS|FAIL|forward check|step [0-9]+: kiln-run)' "${log}"
  record "compare_torch:${sample}" "${status}"
done

# The digits CNN: 500 steps (20 epochs of 25 batches of 64).
sample=digits_cnn
digits=(--lr 3e-3 --warmup 25 --seed "${seed}")
digits_bound=0.98
if [[ -n "${SAMPLES:-}" && " ${SAMPLES} " != *" ${sample} "* ]]; then
  :
elif [[ -e "${sample}.skipped" ]]; then
  skipped=$((skipped + 1))
  echo "SKIP ${sample}: $(grep -m1 error "${sample}.skipped")"
  cp "${sample}.skipped" "${logs}/"
else
  for precision in f32 bf16; do
    suffix=""
    [[ "${precision}" == bf16 ]] && suffix=_bf16
    log="${logs}/${sample}_kiln_run_${precision}.log"
    ckpt="${logs}/${sample}_${precision}.safetensors"
    ./kiln-run "${sample}${suffix}.kiln" --steps 500 --dataset digits_train.kilndata \
      --batch-fields images,labels "${digits[@]}" --schedule cosine --checkpoint "${ckpt}" \
      >"${log}" 2>&1 &&
      ./kiln-run "${sample}_eval${suffix}.kiln" --params "${ckpt}" \
        --dataset digits_heldout.kilndata --batch-fields images,labels >>"${log}" 2>&1
    status=$?
    value="$(metric "${log}" accuracy)"
    if [[ ${status} -eq 0 && -n "${value}" ]]; then
      awk -v v="${value}" -v b="${digits_bound}" 'BEGIN { exit !(v > b) }' || status=1
      note="held-out accuracy ${value} (bound > ${digits_bound}), loss $(metric "${log}" loss)"
    else
      status=1
      note="see ${log}"
    fi
    echo "${note}" | tee -a "${log}"
    record "kiln-run:${sample}:${precision}" "${status}"
  done
  for precision in f32 bf16; do
    suffix=""
    [[ "${precision}" == bf16 ]] && suffix=_bf16
    log="${logs}/${sample}_train_digits_${precision}.log"
    ./train_digits --model "${sample}${suffix}.kiln" --eval-model "${sample}_eval${suffix}.kiln" \
      --train digits_train.kilndata --heldout digits_heldout.kilndata --epochs 20 \
      "${digits[@]}" --expect-accuracy-above "${digits_bound}" >"${log}" 2>&1
    status=$?
    grep -E '^held-out' "${log}"
    record "train_digits:${sample}:${precision}" "${status}"
  done
  log="${logs}/${sample}_compare_torch.log"
  python3 compare_digits.py --model "${sample}.mlir" --artifact "${sample}.kiln" \
    --eval-artifact "${sample}_eval.kiln" --bf16-artifact "${sample}_bf16.kiln" \
    --bf16-eval-artifact "${sample}_eval_bf16.kiln" --train digits_train.kilndata \
    --heldout digits_heldout.kilndata --params "${sample}.params.safetensors" \
    --expected "${sample}.expected.safetensors" --reference-log "${sample}.reference.log" \
    --workdir "${logs}/${sample}_compare" --kiln-run ./kiln-run --steps 500 "${digits[@]}" \
    --strict-steps 30 --tolerance 1e-3 --accuracy-above "${digits_bound}" \
    --accuracy-tolerance 0.02 >"${log}" 2>&1
  status=$?
  grep -E '^(PASS|FAIL|forward check|step [0-9]+: kiln-run|  (torch|kiln) |kiln-run against)' "${log}"
  record "compare_torch:${sample}" "${status}"
fi

summary="${passed} passed, ${failed} failed"
[[ ${skipped} -gt 0 ]] && summary+=", ${skipped} skipped"
echo "${summary}" | tee "${logs}/summary.txt"
[[ ${failed} -eq 0 ]]
