#!/bin/bash
# Compiles every kernel template instance the planners may choose with nvcc,
# for each architecture the instance lists (this shard's share of them), and fails on a compile error or,
# on sm_90/sm_90a, on any register spill or performance loss (a serialised
# wgmma pipeline) that ptxas reports.
#
#   check_templates.sh KILN_TEMPLATE_INSTANCES TEMPLATE.cuh...
#
# The templates are laid out as include/kiln/<file>, the names kernels
# include them by, as NVRTC sees them inside the compiler.
set -uo pipefail

instances_tool=$1
shift
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [[ ! -x ${nvcc} ]]; then
  echo "check_templates: nvcc not found at ${nvcc}" >&2
  exit 1
fi

work=${TEST_TMPDIR:-$(mktemp -d)}/templates
rm -rf "${work}"
mkdir -p "${work}/include/kiln" "${work}/instances" "${work}/logs"
cp "$@" "${work}/include/kiln/"

# The rules read off the templates' text (template_rules.sh, beside this).
"$(dirname "$0")/template_rules.sh" "$@" || exit 1

"${instances_tool}" "${work}/instances" || exit 1

compile() {
  local name=$1 arch=$2
  local log="${work}/logs/${name}.${arch}.log"
  if ! "${nvcc}" -std=c++17 -I"${work}/include" -arch="${arch}" -cubin \
    -Xptxas -v -o "${work}/logs/${name}.${arch}.cubin" \
    "${work}/instances/${name}.cu" >"${log}" 2>&1; then
    echo "FAIL ${name} ${arch}: does not compile"
    cat "${log}"
    return 1
  fi
  if [[ ${arch} == sm_90* ]] &&
    grep -E '[1-9][0-9]* bytes spill (stores|loads)' "${log}" >/dev/null; then
    echo "FAIL ${name} ${arch}: registers spill"
    grep -E 'Compiling entry|spill' "${log}"
    return 1
  fi
  # ptxas serialising a kernel's wgmma pipeline (too few registers for the
  # accumulators in flight, other instructions writing them meanwhile).
  if [[ ${arch} == sm_90* ]] && grep -F 'Potential Performance Loss' "${log}" >/dev/null; then
    echo "FAIL ${name} ${arch}: ptxas reports a performance loss"
    grep -F 'Potential Performance Loss' "${log}"
    return 1
  fi
  echo "ok   ${name} ${arch}"
}
export -f compile
export nvcc work

# Under Bazel's test sharding each shard compiles every TEST_TOTAL_SHARDS-th
# (instance, architecture) pair from its own index: the shards run side by
# side, each within the test's time limit however slow the machine.
shards=${TEST_TOTAL_SHARDS:-1} shard=${TEST_SHARD_INDEX:-0}
[[ -n ${TEST_SHARD_STATUS_FILE:-} ]] && touch "${TEST_SHARD_STATUS_FILE}"
jobs=$(nproc 2>/dev/null || echo 2)
while read -r name arches; do
  for arch in ${arches}; do echo "${name} ${arch}"; done
done <"${work}/instances/instances.txt" |
  awk -v shards="${shards}" -v shard="${shard}" '(NR - 1) % shards == shard' |
  xargs -P "${jobs}" -L 1 bash -c 'compile "$0" "$1"' >"${work}/results.txt"
cat "${work}/results.txt"

passed=$(grep -c '^ok ' "${work}/results.txt")
failed=$(grep -c '^FAIL ' "${work}/results.txt")
echo "check_templates: ${passed} compiled, ${failed} failed"
[[ ${failed} -eq 0 && ${passed} -gt 0 ]]
