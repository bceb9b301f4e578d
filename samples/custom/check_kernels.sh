#!/bin/bash
# Compiles the custom kernels kilnc generates for a model with nvcc, for
# sm_90 and sm_80, in the builds a user would make (inference, f32 SGD, bf16
# AdamW), failing on a compile error or a register spill.
#
#   check_kernels.sh KILNC MODEL.mlir TEMPLATE.cuh...
set -uo pipefail
kilnc=$1 model=$2
shift 2
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [[ ! -x ${nvcc} ]]; then
  echo "check_kernels: nvcc not found at ${nvcc}" >&2
  exit 1
fi
work=${TEST_TMPDIR:-$(mktemp -d)}/custom_kernels
rm -rf "${work}"
mkdir -p "${work}/include/kiln"
cp "$@" "${work}/include/kiln/"

passed=0 failed=0
for build in "--inference" "--train=sgd" "--train=adamw --precision=bf16"; do
  tag=$(echo "${build}" | sed "s/--//g; s/[^a-z0-9]/_/g")
  # shellcheck disable=SC2086
  if ! "${kilnc}" "${model}" ${build} --emit=cuda -o "${work}/${tag}.cu.txt"; then
    echo "FAIL kilnc ${build}"
    failed=$((failed + 1))
    continue
  fi
  # One file per custom kernel of the listing.
  awk -v dir="${work}" -v tag="${tag}" '
    /^\/\/ ===== / { out = ""; if ($3 ~ /^kiln_custom_/) out = dir "/" tag "." $3 ".cu"; next }
    out != "" { print > out }' "${work}/${tag}.cu.txt"
done
kernels=("${work}"/*.kiln_custom_*.cu)
if [[ ! -e ${kernels[0]} ]]; then
  echo "check_kernels: kilnc generated no custom kernel for ${model}" >&2
  exit 1
fi
for source in "${kernels[@]}"; do
  for arch in sm_90 sm_80; do
    log="${source%.cu}.${arch}.log"
    if ! "${nvcc}" -std=c++17 -I"${work}/include" -arch="${arch}" -cubin \
      -Xptxas -v -o "${source%.cu}.${arch}.cubin" "${source}" >"${log}" 2>&1; then
      echo "FAIL $(basename "${source}") ${arch}: does not compile"
      cat "${log}"
      failed=$((failed + 1))
    elif grep -E '[1-9][0-9]* bytes spill (stores|loads)' "${log}" >/dev/null; then
      echo "FAIL $(basename "${source}") ${arch}: registers spill"
      failed=$((failed + 1))
    else
      echo "ok   $(basename "${source}") ${arch}"
      passed=$((passed + 1))
    fi
  done
done
echo "check_kernels: ${passed} compiled, ${failed} failed"
[[ ${failed} -eq 0 && ${passed} -gt 0 ]]
