#!/bin/bash
# A token sample (samples/transformer_classifier.mlir, samples/byte_lm.mlir)
# compiles for GPU training in f32 and bf16 (fusion and kernel planning:
# kilnc --emit=cuda, everything but NVRTC), and the CPU reference trains it
# for a few steps on one batch of its data, the loss falling at every step.
#   token_sample_trains.sh KILNC MAKE_DATASET TRAIN_REFERENCE MODEL order|text STEPS
# The text task's windows are cut from the model's own source file.
set -euo pipefail
kilnc="$1" make_dataset="$2" train_reference="$3" model="$4" task="$5" steps="$6"
work="${TEST_TMPDIR:-$(mktemp -d)}"
for precision in f32 bf16; do
  "${kilnc}" "${model}" --precision="${precision}" --emit=cuda --no-kernel-cache \
    -o "${work}/${precision}.cu"
  echo "kilnc ${model} --precision=${precision}: $(grep -c '^// =====' "${work}/${precision}.cu") kernels"
done
# One batch (64 sequences, or 32 windows): every step trains on it.
if [[ "${task}" == order ]]; then
  "${make_dataset}" --task order --records 64 --seed 3 --out "${work}/data.kilndata"
else
  "${make_dataset}" --task text --text "${model}" --records 32 --seed 3 \
    --out "${work}/data.kilndata" --heldout-out "${work}/heldout.kilndata"
fi
"${train_reference}" --model "${model}" --dataset "${work}/data.kilndata" \
  --steps "${steps}" --lr 1e-3 --log-every 1 | tee "${work}/train.log"
awk -v steps="${steps}" '
  /^step / { if (n++ && $4 >= last) falling = 0; last = $4 }
  BEGIN { falling = 1 }
  END { if (n != steps || !falling) { print "FAIL: the loss did not fall at every step"; exit 1 } }
' "${work}/train.log"
