#!/bin/bash
# compare_kernels.sh [--emit=cuda|ptx] [--cases=REGEX] OLD_KILNC NEW_KILNC
#                    [WORKDIR]:
# compiles a set of models (the samples, the GEMM, conv and attention bench
# models, the transformer block and ResNet-18) with two kilnc binaries and
# compares the output of every kernel byte for byte: its CUDA source
# (--emit=cuda, the default, which does not compile the kernels) or its
# PTX (--emit=ptx, compiled by NVRTC: what must not change when only the
# kernel templates' code is rearranged, since the CUDA source includes
# them). --cases keeps the cases (a model, then its flags) that match the
# extended regex. Prints one line per model and compilation, then
# "N same, N differ"; exits with 1 if any differs or fails. With --emit=ptx
# a case counts as the same when each kernel that differs also differs
# between runs of the old kilnc (NVRTC's register numbering and order of a
# few kernels, the f32 optimizer's among them, vary from run to run). Run from the
# repository root, e.g.
#   tools/compare_kernels.sh /tmp/main-kilnc bazel-bin/tools/kilnc/kilnc
#   tools/compare_kernels.sh --emit=ptx --cases=gemm_ /tmp/main-kilnc \
#     bazel-bin/tools/kilnc/kilnc
set -u
emit=cuda
only=''
while [[ $# -gt 0 && $1 == --* ]]; do
  case "$1" in
  --emit=cuda | --emit=ptx) emit=${1#--emit=} ;;
  --cases=*) only=${1#--cases=} ;;
  *)
    echo "compare_kernels: unknown option $1" >&2
    exit 2
    ;;
  esac
  shift
done
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

# Writes each kernel of a kilnc output FILE (after its "// ===== name ====="
# line) to DIR/name.
split_kernels() {
  mkdir -p "$2"
  awk -v dir="$2" '/^\/\/ ===== [^ ]+ =====$/ { out = dir "/" $3; next }
    out { print > out }' "$1"
}

# Given the case number, model and flags of a PTX comparison that differs:
# prints the kernels that differ and succeeds if the PTX of each of them
# also differs between two more runs of the old kilnc without its kernel
# cache (NVRTC's output for a few kernels varies from run to run).
only_unstable_differ() {
  local index=$1 model=$2 flags=$3 base="${work}/$1.kernels" kernel run
  local differing=()
  split_kernels "${work}/${index}.old.ptx" "${base}/old"
  split_kernels "${work}/${index}.new.ptx" "${base}/new"
  for kernel in $(ls "${base}/old" "${base}/new" | grep -v ':$' | sort -u); do
    cmp -s "${base}/old/${kernel}" "${base}/new/${kernel}" ||
      differing+=("${kernel}")
  done
  echo "${differing[*]}"
  for run in 2 3; do
    # shellcheck disable=SC2086
    "${old}" "${model}" ${flags} --emit=ptx --no-kernel-cache \
      -o "${work}/${index}.old${run}.ptx" 2>/dev/null || return 1
    split_kernels "${work}/${index}.old${run}.ptx" "${base}/old${run}"
  done
  for kernel in "${differing[@]}"; do
    if cmp -s "${base}/old/${kernel}" "${base}/old2/${kernel}" &&
      cmp -s "${base}/old/${kernel}" "${base}/old3/${kernel}"; then
      return 1
    fi
  done
}

same=0
differ=0
unstable=0
index=0
while read -r model flags; do
  index=$((index + 1))
  # shellcheck disable=SC2086 # the flags are words
  "${old}" "${model}" ${flags} --emit="${emit}" -o "${work}/${index}.old.${emit}" \
    2>"${work}/${index}.old.err"
  old_status=$?
  # shellcheck disable=SC2086
  "${new}" "${model}" ${flags} --emit="${emit}" -o "${work}/${index}.new.${emit}" \
     2>"${work}/${index}.new.err"
  new_status=$?
  if [ "${old_status}" -ne 0 ] && [ "${new_status}" -ne 0 ] &&
    cmp -s "${work}/${index}.old.err" "${work}/${index}.new.err"; then
    echo "same (both fail alike): ${model} ${flags}"
    same=$((same + 1))
  elif [ "${old_status}" -eq 0 ] && [ "${new_status}" -eq 0 ] &&
    cmp -s "${work}/${index}.old.${emit}" "${work}/${index}.new.${emit}"; then
    echo "same ($(grep -c '^// ===== ' "${work}/${index}.new.${emit}") kernels): ${model} ${flags}"
    same=$((same + 1))
  elif [ "${emit}" = ptx ] && [ "${old_status}" -eq 0 ] &&
    [ "${new_status}" -eq 0 ] &&
    kernels=$(only_unstable_differ "${index}" "${model}" "${flags}"); then
    echo "same but for kernels whose PTX varies from run to run (${kernels}): ${model} ${flags}"
    same=$((same + 1))
    unstable=$((unstable + 1))
  else
    echo "DIFFER: ${model} ${flags} (exit ${old_status} vs ${new_status}; ${work}/${index}.*)"
    differ=$((differ + 1))
  fi
done < <(cases | grep -E -- "${only:-.}")
echo "${same} same, ${differ} differ"
if [ "${unstable}" -gt 0 ]; then
  echo "(${unstable} of the same only up to kernels whose PTX differs between runs of the old kilnc)"
fi
[ "${differ}" -eq 0 ]
