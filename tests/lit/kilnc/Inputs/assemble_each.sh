#!/bin/bash
# assemble_each.sh FILE.ptx: assembles every kernel of `kilnc --emit=ptx`
# output (kernels follow `// ===== name =====` lines) with ptxas for the
# target its PTX names, and prints "assembled N kernels" when all do.
set -euo pipefail
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
dir=$(mktemp -d)
trap 'rm -rf "${dir}"' EXIT
awk -v dir="${dir}" '
  /^\/\/ ===== .* =====$/ { n++; file = sprintf("%s/%04d.ptx", dir, n); next }
  n { print > file }' "$1"
count=0
for ptx in "${dir}"/*.ptx; do
  [[ -e ${ptx} ]] || break
  arch=$(awk '$1 == ".target" { sub(",", "", $2); print $2; exit }' "${ptx}")
  if ! "${ptxas}" -arch="${arch}" -o "${dir}/kernel.cubin" "${ptx}"; then
    echo "ptxas failed on kernel $(basename "${ptx}")"
    exit 1
  fi
  count=$((count + 1))
done
echo "assembled ${count} kernels"
