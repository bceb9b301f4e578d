#!/bin/bash
# make_dataset --task digits on a generated file in the layout of
# scikit-learn's digits.csv (64 pixels 0-16 and a label per line): the split
# holds out the requested fraction, the files are the same for the same seed
# and differ for another, and a malformed line is refused with its number.
#   make_dataset_digits_test.sh MAKE_DATASET
set -euo pipefail
make_dataset="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}"
awk 'BEGIN { srand(7); for (n = 0; n < 50; ++n) { line = "";
       for (i = 0; i < 64; ++i) line = line int(rand() * 17) ",";
       print line (n % 10) } }' >"${work}/digits.csv"
run() { # seed out heldout
  "${make_dataset}" --task digits --csv "${work}/digits.csv" --seed "$1" \
    --heldout-fraction 0.2 --out "$2" --heldout-out "$3"
}
out="$(run 1 "${work}/a.kilndata" "${work}/a_held.kilndata")"
echo "${out}"
[[ "${out}" == *"50 images; wrote 40 to"*"and 10 held out to"* ]]
run 1 "${work}/b.kilndata" "${work}/b_held.kilndata" >"${work}/log.txt"
cmp "${work}/a.kilndata" "${work}/b.kilndata"
cmp "${work}/a_held.kilndata" "${work}/b_held.kilndata"
run 2 "${work}/c.kilndata" "${work}/c_held.kilndata" >"${work}/log.txt"
if cmp -s "${work}/a.kilndata" "${work}/c.kilndata"; then
  echo "seeds 1 and 2 gave the same split"; exit 1
fi
# Every record is 64 f32 and one i32; both files hold the same header.
train_size=$(stat -c %s "${work}/a.kilndata")
held_size=$(stat -c %s "${work}/a_held.kilndata")
[[ $((train_size - held_size)) -eq $((30 * 260)) ]]

sed '3s/,16,/,17,/; 3s/^\([0-9]*\),/17,/' "${work}/digits.csv" >"${work}/bad.csv"
if "${make_dataset}" --task digits --csv "${work}/bad.csv" --out "${work}/x" \
    --heldout-out "${work}/y" 2>"${work}/err.txt"; then
  echo "a pixel of 17 was accepted"; exit 1
fi
cat "${work}/err.txt"
grep -q "bad.csv:3: column 1 is not a pixel 0-16" "${work}/err.txt"
echo "make_dataset digits: ok"
