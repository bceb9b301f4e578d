#!/bin/bash
# The all-reduce probe as 1 and 2 ranks on the CPU stand-ins: the average is
# checked and a bandwidth line printed; bad arguments are status 2.
set -uo pipefail
probe="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
for v in KILN_LIBCUDA_PATH KILN_NCCL_LIBRARY; do
  [[ "${!v}" != /* ]] && export "${v}=$(pwd)/${!v}"
done
work="${TEST_TMPDIR:-$(mktemp -d)}/probe"
mkdir -p "${work}"
failures=0
"${probe}" --mib 4 --iters 3 --warmup 1 >"${work}/one.log" 2>&1 ||
  { echo "FAIL one rank"; cat "${work}/one.log"; failures=$((failures + 1)); }
grep -q "all-reduce f32 4 MiB over 1 rank(s).*(average checked)" "${work}/one.log" ||
  { echo "FAIL one rank's line"; cat "${work}/one.log"; failures=$((failures + 1)); }
for r in 0 1; do
  RANK=${r} LOCAL_RANK=${r} WORLD_SIZE=2 KILN_DISTRIBUTED_TIMEOUT_S=30 \
    KILN_RENDEZVOUS_FILE="${work}/rendezvous" \
    "${probe}" --mib 4 --iters 3 --warmup 1 >"${work}/rank${r}.log" 2>&1 &
  pids[${r}]=$!
done
for r in 0 1; do
  wait "${pids[${r}]}" ||
    { echo "FAIL rank ${r}"; cat "${work}/rank${r}.log"; failures=$((failures + 1)); }
done
grep -q "over 2 rank(s).*busbw .*(average checked)" "${work}/rank0.log" ||
  { echo "FAIL two ranks' line"; cat "${work}/rank0.log"; failures=$((failures + 1)); }
"${probe}" --mib 0 >"${work}/bad.log" 2>&1
[[ $? -eq 2 ]] || { echo "FAIL --mib 0 is not status 2"; failures=$((failures + 1)); }
[[ ${failures} -eq 0 ]] && echo "all checks passed"
exit $((failures > 0))
