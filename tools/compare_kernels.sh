#!/bin/bash
# compare_kernels.sh OLD_KILNC NEW_KILNC [WORKDIR]: compiles a set of models
# (the samples, the GEMM, conv and attention bench models, the transformer
# block and ResNet-18) with two kilnc binaries and compares the CUDA source of
# every kernel byte for byte (kilnc --emit=cuda, which does not compile them).
# Prints one line per model and compilation, then "N same, N differ"; exits
# with 1 if any differs or fails. Run from the repository root, e.g.
#   tools/compare_kernels.sh /tmp/main-kilnc bazel-bin/tools/kilnc/kilnc
set -u
old="$1"
new="$2"
work="${3:-$(mktemp -d)}"
mkdir -p "${work}"

# Each line: a model, then kilnc's flags for it.
cases() {
  for sample in mlp sine_block digits_cnn transformer_classifier byte_lm byte_lm_lstm; do
    echo "samples/${sample}.mlir"
    echo "samples/${sample}.mlir --precision=bf16 --train=adamw"
  done
  for model in bench/models/gemm_*.mlir; do
    echo "${model} --inference --function f"
    echo "${model} --inference --function f --gemm-cluster=auto"
    echo "${model} --inference --function f --gemm-tma-store"
    echo "${model} --inference --function f --gemm-schedule=pingpong"
    echo "${model} --inference --function f --no-tma"
    echo "${model} --inference --function f --arch=sm_80"
  done
  for model in bench/models/conv_*.mlir; do
    echo "${model} --inference --function f"
    echo "${model} --inference --function fwdbwd"
  done
  for model in bench/models/attention_*.mlir; do
    echo "${model} --inference --function f"
  done
  echo "bench/models/transformer_block_b8t1024c1024.mlir --train=adamw --precision=bf16"
  echo "bench/models/transformer_block_b8t1024c1024.mlir --train=adamw --precision=bf16 --arch=sm_80"
  echo "bench/models/resnet18_32.mlir --train=adamw --precision=bf16"
  echo "bench/models/resnet18_32.mlir --train=adamw --tf32"
}

same=0
differ=0
index=0
while read -r model flags; do
  index=$((index + 1))
  # shellcheck disable=SC2086 # the flags are words
  "${old}" "${model}" ${flags} --emit=cuda -o "${work}/${index}.old.cu" \
    2>"${work}/${index}.old.err"
  old_status=$?
  # shellcheck disable=SC2086
  "${new}" "${model}" ${flags} --emit=cuda -o "${work}/${index}.new.cu" \
     2>"${work}/${index}.new.err"
  new_status=$?
  if [ "${old_status}" -ne 0 ] && [ "${new_status}" -ne 0 ] &&
    cmp -s "${work}/${index}.old.err" "${work}/${index}.new.err"; then
    echo "same (both fail alike): ${model} ${flags}"
    same=$((same + 1))
  elif [ "${old_status}" -eq 0 ] && [ "${new_status}" -eq 0 ] &&
    cmp -s "${work}/${index}.old.cu" "${work}/${index}.new.cu"; then
    echo "same ($(grep -c '^// ===== ' "${work}/${index}.new.cu") kernels): ${model} ${flags}"
    same=$((same + 1))
  else
    echo "DIFFER: ${model} ${flags} (exit ${old_status} vs ${new_status}; ${work}/${index}.*)"
    differ=$((differ + 1))
  fi
done < <(cases)
echo "${same} same, ${differ} differ"
[ "${differ}" -eq 0 ]
