#!/bin/bash
# train_reference on samples/digits_cnn.mlir from KILNDATA files: the batch
# norm running statistics are the trainer's state, not dataset fields, and
# the held-out evaluation (the forward entry, on the running statistics)
# reports the loss and the accuracy, also every --eval-every steps. The data
# is make_dataset --task digits on a generated file in the layout of
# scikit-learn's digits.csv whose label is the brightest quarter of the
# image, so that 40 steps learn it.
#   train_reference_digits_test.sh MAKE_DATASET TRAIN_REFERENCE MODEL
set -euo pipefail
make_dataset="$1"
train_reference="$2"
model="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}"
awk 'BEGIN { srand(3); for (n = 0; n < 640; ++n) { q = n % 4; line = "";
       for (i = 0; i < 64; ++i) {
         bright = (int(i / 32) * 2 + int((i % 8) / 4)) == q;
         line = line (bright ? 10 + int(rand() * 7) : int(rand() * 7)) "," }
       print line q } }' >"${work}/digits.csv"
"${make_dataset}" --task digits --csv "${work}/digits.csv" --seed 1 --heldout-fraction 0.2 \
  --out "${work}/train.kilndata" --heldout-out "${work}/heldout.kilndata"
"${train_reference}" --model "${model}" --dataset "${work}/train.kilndata" \
  --heldout "${work}/heldout.kilndata" --steps 40 --warmup 5 --lr 3e-3 --clip-norm 0 \
  --eval-every 20 --log-every 10 | tee "${work}/log.txt"
grep -q '^training .* (8 batches, in file order)' "${work}/log.txt"
grep -q '^step 20: held-out loss over 2 batches: .* accuracy ' "${work}/log.txt"
final="$(grep '^held-out loss over 2 batches: ' "${work}/log.txt")"
accuracy="$(sed -E 's/.*, accuracy ([0-9.]+)$/\1/' <<<"${final}")"
awk -v a="${accuracy}" 'BEGIN { exit !(a > 0.9) }' || {
  echo "FAIL: held-out accuracy ${accuracy} after 40 steps"
  exit 1
}
echo "PASS: held-out accuracy ${accuracy}"
