#!/bin/bash
# Builds, on this machine, the GPU runs of the token samples
# (samples/transformer_classifier.mlir, samples/byte_lm.mlir,
# samples/byte_lm_lstm.mlir, samples/byte_lm_slstm.mlir) and of the digits
# CNN (samples/digits_cnn.mlir) into DIR (default .gpu-bundle/samples,
# git-ignored):
#  - per sample NAME, the training artifacts (kilnc, its default AdamW):
#      NAME.kiln               the model as written (dropout 0.1), f32
#      NAME_bf16.kiln          the same with --precision=bf16
#      NAME_nodrop.kiln        every dropout rate set to 0 (NAME_nodrop.mlir):
#      NAME_nodrop_bf16.kiln   the held-out evaluation (forward entry) and the
#                              comparison with PyTorch
#    and NAME.stats (kilnc --stats of NAME.kiln);
#  - NAME.params.safetensors: the initial parameters under seed SEED (default
#    1) drawn by kiln-ref --init-params, with random inputs, and
#    NAME.expected.safetensors the f64 loss of NAME_nodrop.mlir there;
#  - NAME.reference.log: the first 3 steps of NAME_nodrop.mlir trained by the
#    CPU reference (train_reference, f32) as the comparison trains it on the
#    GPU (same parameters, batches, AdamW settings and learning rates);
#  - the data (make_dataset): classifier_{train,heldout}.kilndata (--task
#    order, 32768 and 2048 sequences, seeds 1 and 2) and lm_{train,heldout}
#    .kilndata (--task text on the files of /usr/share/common-licenses
#    concatenated in sorted order, the last 10% held out);
#  - the recurrent language models (samples/byte_lm_lstm.mlir,
#    samples/byte_lm_slstm.mlir: no dropout, so one artifact serves training
#    and evaluation): NAME.kiln, NAME_bf16.kiln, NAME.stats, NAME.mlir,
#    NAME.params.safetensors, NAME.expected.safetensors (the f64 loss there)
#    and NAME.reference.log (3 CPU reference steps) as above, on the lm data.
#    Where kilnc refuses such a model (no GPU kernel for its ops yet), its
#    diagnostic is written to NAME.skipped instead and run.sh reports the
#    sample as skipped;
#  - the digits CNN (samples/digits_cnn.mlir, batch norm with running
#    statistics, no dropout) on digits_{train,heldout}.kilndata (make_dataset
#    --task digits --seed 1 on scikit-learn's digits.csv.gz, from the
#    installed python3-sklearn or else its Debian package fetched with
#    apt-get download; 1618 and 179 records): digits_cnn.kiln,
#    digits_cnn_bf16.kiln, digits_cnn.stats, digits_cnn.mlir, the held-out
#    evaluation digits_cnn_eval.mlir (the same model with the held-out
#    split's record count as its batch, so one batch holds every record) and
#    its --inference artifacts digits_cnn_eval{,_bf16}.kiln,
#    digits_cnn.params.safetensors, digits_cnn.expected.safetensors (the f64
#    loss there) and digits_cnn.reference.log (the CPU reference's steps of
#    the warm-up), or digits_cnn.skipped where kilnc refuses the model;
#  - kiln-run, train_transformer and train_digits (static; the driver is
#    loaded at run time), compare_losses.py, compare_rnn_lm.py,
#    compare_digits.py, kiln_rnn.py, run.sh and COMMIT.
# Artifacts and data are stored gzip-compressed (run.sh unpacks them), which
# keeps the bundle near 25 MB instead of 60.
# Then, on the GPU machine: DIR/run.sh LOGDIR
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.gpu-bundle/samples}"
seed="${SEED:-1}"
licenses=/usr/share/common-licenses
rm -rf "${out}"
mkdir -p "${out}"
targets=(//tools/kilnc //tools/kiln-ref //tools/kiln-run //samples:make_dataset
  //samples:train_transformer //samples:train_digits //samples:train_reference)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
bin="$(bazel info bazel-bin 2>/dev/null)"
kilnc="${bin}/tools/kilnc/kilnc"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

make_dataset="${bin}/samples/make_dataset"
"${make_dataset}" --task order --records 32768 --seed 1 --out "${out}/classifier_train.kilndata"
"${make_dataset}" --task order --records 2048 --seed 2 --out "${out}/classifier_heldout.kilndata"
mapfile -t texts < <(find "${licenses}/" -mindepth 1 -maxdepth 1 | LC_ALL=C sort)
cat "${texts[@]}" >"${tmp}/licenses.txt"
"${make_dataset}" --task text --text "${tmp}/licenses.txt" --length 128 --stride 64 \
  --heldout-fraction 0.1 --seed 1 --out "${out}/lm_train.kilndata" \
  --heldout-out "${out}/lm_heldout.kilndata" | tee "${out}/lm_data.txt"
echo "text: ${texts[*]}" >>"${out}/lm_data.txt"

# Peak learning rates and schedule lengths of run.sh (the first 3 steps are
# in the warm-up of 100 steps, so only the peak matters here).
declare -A peak=([transformer_classifier]=1e-3 [byte_lm]=2e-3)
declare -A data=([transformer_classifier]=classifier [byte_lm]=lm)
for sample in transformer_classifier byte_lm; do
  nodrop="${out}/${sample}_nodrop.mlir"
  sed -E 's/(kiln\.dropout .* rate = )[0-9.e+-]+/\10.0/' "samples/${sample}.mlir" >"${nodrop}"
  grep -q 'rate = 0.0 ' "${nodrop}"
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" --stats 2>"${out}/${sample}.stats"
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}_bf16.kiln" --precision=bf16
  "${kilnc}" "${nodrop}" -o "${out}/${sample}_nodrop.kiln"
  "${kilnc}" "${nodrop}" -o "${out}/${sample}_nodrop_bf16.kiln" --precision=bf16
  # Tokens and labels uniform in [0, classes): valid for the embedding and
  # the loss alike.
  range=256
  [[ "${sample}" == transformer_classifier ]] && range=6
  "${bin}/tools/kiln-ref/kiln-ref" "${nodrop}" --function loss --random-seed "${seed}" \
    --init-params --int-range "${range}" --precision f64 \
    --save-inputs "${out}/${sample}.params.safetensors" \
    -o "${out}/${sample}.expected.safetensors"
  "${bin}/samples/train_reference" --model "${nodrop}" \
    --dataset "${out}/${data[${sample}]}_train.kilndata" --steps 3 --warmup 100 \
    --lr "${peak[${sample}]}" --beta1 0.9 --beta2 0.999 --epsilon 1e-8 \
    --weight-decay 0.01 --clip-norm 0 --seed "${seed}" --log-every 1 \
    >"${out}/${sample}.reference.log"
done

# The recurrent language models: peak learning rate and warm-up of run.sh.
rnn_peak=3e-3
rnn_warmup=50
for sample in byte_lm_lstm byte_lm_slstm; do
  if ! "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" --stats \
    2>"${out}/${sample}.stats"; then
    mv "${out}/${sample}.stats" "${out}/${sample}.skipped"
    rm -f "${out}/${sample}.kiln"
    echo "${sample}: kilnc refused it, left out: $(grep -m1 error "${out}/${sample}.skipped")"
    continue
  fi
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}_bf16.kiln" --precision=bf16
  cp "samples/${sample}.mlir" "${out}/${sample}.mlir"
  "${bin}/tools/kiln-ref/kiln-ref" "samples/${sample}.mlir" --function loss --random-seed "${seed}" \
    --init-params --int-range 256 --precision f64 \
    --save-inputs "${out}/${sample}.params.safetensors" \
    -o "${out}/${sample}.expected.safetensors"
  "${bin}/samples/train_reference" --model "samples/${sample}.mlir" \
    --dataset "${out}/lm_train.kilndata" --steps 3 --warmup "${rnn_warmup}" \
    --lr "${rnn_peak}" --beta1 0.9 --beta2 0.999 --epsilon 1e-8 \
    --weight-decay 0.01 --clip-norm 0 --seed "${seed}" --log-every 1 \
    >"${out}/${sample}.reference.log"
done

# The digits CNN: scikit-learn's 8x8 digits, from the installed python3-sklearn
# or else from its Debian package.
digits_gz=/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz
if [[ ! -e "${digits_gz}" ]]; then
  (cd "${tmp}" && apt-get download python3-sklearn >/dev/null 2>&1 &&
    dpkg -x python3-sklearn_*.deb sklearn)
  digits_gz="${tmp}/sklearn${digits_gz}"
fi
zcat "${digits_gz}" >"${tmp}/digits.csv"
"${make_dataset}" --task digits --csv "${tmp}/digits.csv" --seed 1 \
  --out "${out}/digits_train.kilndata" --heldout-out "${out}/digits_heldout.kilndata" |
  tee "${out}/digits_data.txt"
# Peak learning rate and warm-up of run.sh; the CPU reference trains the
# steps of the warm-up, whose learning rates do not depend on the schedule's
# length.
digits_peak=3e-3
digits_warmup=25
sample=digits_cnn
if ! "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}.kiln" --stats \
  2>"${out}/${sample}.stats"; then
  mv "${out}/${sample}.stats" "${out}/${sample}.skipped"
  rm -f "${out}/${sample}.kiln"
  echo "${sample}: kilnc refused it, left out: $(grep -m1 error "${out}/${sample}.skipped")"
else
  "${kilnc}" "samples/${sample}.mlir" -o "${out}/${sample}_bf16.kiln" --precision=bf16
  cp "samples/${sample}.mlir" "${out}/${sample}.mlir"
  # The evaluation copy: the batch (the leading dimension of every batch
  # tensor, and only that, is "<64x") becomes the held-out record count.
  batch="$(sed -nE 's/.*%images: tensor<([0-9]+)x1x8x8xf32>.*/\1/p' "samples/${sample}.mlir")"
  heldout="$(sed -nE 's/.* and ([0-9]+) held out to .*/\1/p' "${out}/digits_data.txt")"
  sed "s/<${batch}x/<${heldout}x/g" "samples/${sample}.mlir" >"${out}/${sample}_eval.mlir"
  grep -q "%images: tensor<${heldout}x1x8x8xf32>" "${out}/${sample}_eval.mlir"
  "${kilnc}" "${out}/${sample}_eval.mlir" --inference -o "${out}/${sample}_eval.kiln"
  "${kilnc}" "${out}/${sample}_eval.mlir" --inference --precision=bf16 \
    -o "${out}/${sample}_eval_bf16.kiln"
  # Images uniform in [-1, 1), labels uniform in [0, 10).
  "${bin}/tools/kiln-ref/kiln-ref" "samples/${sample}.mlir" --function loss --random-seed "${seed}" \
    --init-params --int-range 10 --precision f64 \
    --save-inputs "${out}/${sample}.params.safetensors" \
    -o "${out}/${sample}.expected.safetensors"
  "${bin}/samples/train_reference" --model "samples/${sample}.mlir" \
    --dataset "${out}/digits_train.kilndata" --steps "${digits_warmup}" \
    --warmup "${digits_warmup}" --lr "${digits_peak}" --beta1 0.9 --beta2 0.999 \
    --epsilon 1e-8 --weight-decay 0.01 --clip-norm 0 --seed "${seed}" --log-every 1 \
    >"${out}/${sample}.reference.log"
fi
echo "${seed}" >"${out}/SEED"

cp "${bin}/tools/kiln-run/kiln-run" "${bin}/samples/train_transformer" \
  "${bin}/samples/train_digits" "${out}/"
cp samples/torch/compare_losses.py samples/torch/compare_rnn_lm.py \
  samples/torch/compare_digits.py samples/torch/kiln_rnn.py "${out}/"
cp samples/run_gpu_bundle.sh "${out}/run.sh"
gzip -9 "${out}"/*.kiln "${out}"/*.kilndata
commit="$(git rev-parse HEAD)"
if [[ -n "$(git status --porcelain --untracked-files=no)" ]]; then
  commit+="-dirty"
fi
echo "${commit}" >"${out}/COMMIT"
echo "bundle in ${out} ($(du -sh "${out}" | cut -f1), commit ${commit}, seed ${seed})"
