#!/bin/bash
# The GPU check of data-parallel training, on the GPU machine, from the
# bundle that make_bundle.sh made:
#   DIR/run.sh LOGDIR [GPUS]        GPUS 2 (default) or 1
# Every process runs with NCCL_NVLS_ENABLE=0 (no NVLink SHARP, so NCCL never
# creates multicast objects). NCCL is $KILN_NCCL_LIBRARY, else the
# libnccl.so.2 of PyTorch's site-packages (nvidia/nccl/lib).
#  - the all-reduce probe: 256 MiB of f32, the average checked, algorithm and
#    bus bandwidth (GPUS ranks);
#  - tests/gpu:data_parallel_test on the GPUs (with one GPU: its one-rank
#    test);
#  - per model (sine block f32, 1024-wide transformer block bf16), 100 steps:
#    one rank through NCCL must train bit for bit as without it
#    (--distributed=nccl vs off, the --data-parallel artifact); with 2 GPUs,
#    2 ranks (kiln-run --nproc 2, per-rank batch B) against 1 GPU on the
#    global batches (2B, compiled without --data-parallel): the parameters
#    within a bound (SINE_RTOL, BLOCK_RTOL of each tensor's largest value),
#    rank 0's checkpoint evaluated by a single-GPU run (and loaded by
#    PyTorch's safetensors where installed), and the step times (speed-up
#    over one GPU on the global batch, weak-scaling efficiency against one
#    GPU on the per-rank batch).
# Writes LOGDIR/summary.txt (PASS/FAIL/SKIP lines, the numbers); exit status
# 1 when a check failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
logs="${1:?usage: run.sh LOGDIR [GPUS]}"
gpus="${2:-2}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
summary="${logs}/summary.txt"
: >"${summary}"
export NCCL_NVLS_ENABLE=0
export KILN_DISTRIBUTED_TIMEOUT_S="${KILN_DISTRIBUTED_TIMEOUT_S:-300}"
if [[ -z "${KILN_NCCL_LIBRARY:-}" ]]; then
  KILN_NCCL_LIBRARY="$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = site.getsitepackages() + [site.getusersitepackages()]
for d in dirs:
    found = sorted(glob.glob(os.path.join(d, "nvidia", "nccl", "lib", "libnccl.so*")))
    if found:
        print(found[0])
        break
PY
)"
  export KILN_NCCL_LIBRARY
fi
note() { echo "$*" | tee -a "${summary}"; }
failures=0
pass() { note "PASS $*"; }
fail() { note "FAIL $*"; failures=$((failures + 1)); }
# check <name> <command...>: PASS when the command exits 0 (output in
# LOGDIR/<name>.log).
check() {
  local name="$1"
  shift
  if "$@" >"${logs}/${name}.log" 2>&1; then
    pass "${name}"
  else
    fail "${name} (exit $?; ${logs}/${name}.log)"
    tail -5 "${logs}/${name}.log" | sed 's/^/    /' | tee -a "${summary}"
  fi
}
# The median ms/step of a kiln-run log's progress lines after the first.
ms_per_step() {
  python3 - "$1" <<'PY'
import re, statistics, sys
ms = [float(m.group(1)) for m in
      (re.search(r"([0-9.]+) ms/step", l) for l in open(sys.argv[1])) if m]
print("%.3f" % statistics.median(ms[1:] or ms) if ms else "nan")
PY
}

note "data-parallel check on $(hostname), $(date -u +%FT%TZ), ${gpus} GPU(s), commit $(cat "${here}/COMMIT" 2>/dev/null)"
nvidia-smi -L >"${logs}/gpus.txt" 2>&1 || true
note "NCCL: ${KILN_NCCL_LIBRARY:-libnccl.so.2 from the library path}; NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE}"

# The all-reduce probe.
if [[ "${gpus}" -ge 2 ]]; then
  rm -f "${logs}/probe.rendezvous"*
  for ((r = 0; r < gpus; ++r)); do
    RANK=${r} LOCAL_RANK=${r} WORLD_SIZE=${gpus} \
      KILN_RENDEZVOUS_FILE="${logs}/probe.rendezvous" \
      "${here}/allreduce_probe" --mib "${PROBE_MIB:-256}" >"${logs}/probe_rank${r}.log" 2>&1 &
    probe_pids[${r}]=$!
  done
  probe_ok=1
  for ((r = 0; r < gpus; ++r)); do wait "${probe_pids[${r}]}" || probe_ok=0; done
  cp "${logs}/probe_rank0.log" "${logs}/probe.log"
  if [[ ${probe_ok} -eq 1 ]]; then pass "allreduce_probe"; else
    fail "allreduce_probe"; cat "${logs}"/probe_rank*.log | tee -a "${summary}"; fi
else
  check allreduce_probe "${here}/allreduce_probe" --mib "${PROBE_MIB:-256}"
fi
grep "all-reduce f32" "${logs}/probe.log" "${logs}/allreduce_probe.log" 2>/dev/null |
  sed 's/^[^:]*://' | tee -a "${summary}"

# The runtime's data-parallel test on the real driver and NCCL: linear
# regression, 2 ranks on half batches against 1 on whole ones (graphs, no
# graphs, split entries) and one rank against none.
if [[ "${gpus}" -ge 2 ]]; then
  check data_parallel_test env KILN_DATA_PARALLEL_TEST_REAL=1 \
    "${here}/data_parallel_test"
else
  check data_parallel_test env KILN_DATA_PARALLEL_TEST_REAL=1 \
    "${here}/data_parallel_test" --gtest_filter=DataParallelTest.OneRankTrainsExactlyAsWithoutACommunicator
fi

# model <name> <lr> <rtol> <dataset>
model() {
  local name="$1" lr="$2" rtol="$3" data="${here}/$4"
  local train=(--steps 100 --dataset "${data}" --batch-fields x,y --lr "${lr}"
               --seed 1 --log-every 10)
  cd "${logs}" || return
  check "${name}_one_rank_nccl" "${here}/kiln-run" "${here}/${name}_dp.kiln" \
    --distributed=nccl "${train[@]}" --checkpoint "${logs}/${name}_nccl1.safetensors"
  check "${name}_one_rank_off" "${here}/kiln-run" "${here}/${name}_dp.kiln" \
    --distributed=off "${train[@]}" --checkpoint "${logs}/${name}_off1.safetensors"
  check "${name}_one_rank_nccl_equals_none" python3 "${here}/compare_checkpoints.py" \
    --exact "${logs}/${name}_nccl1.safetensors" "${logs}/${name}_off1.safetensors"
  local t_nccl1 t_off1
  t_nccl1="$(ms_per_step "${logs}/${name}_one_rank_nccl.log")"
  t_off1="$(ms_per_step "${logs}/${name}_one_rank_off.log")"
  note "${name}: one GPU, per-rank batch: ${t_off1} ms/step without NCCL, ${t_nccl1} ms/step through NCCL (one rank)"
  if [[ "${gpus}" -lt 2 ]]; then
    note "SKIP ${name}: 2 ranks against 1 GPU on the global batch (needs 2 GPUs)"
    return
  fi
  check "${name}_global_batch_1gpu" "${here}/kiln-run" "${here}/${name}_ref.kiln" \
    "${train[@]}" --checkpoint "${logs}/${name}_ref.safetensors"
  check "${name}_2_ranks" "${here}/kiln-run" "${here}/${name}_dp.kiln" --nproc 2 \
    "${train[@]}" --checkpoint "${logs}/${name}_dp2.safetensors"
  check "${name}_2_ranks_equal_global_batch" python3 "${here}/compare_checkpoints.py" \
    --rtol "${rtol}" --ignore adam_m.,adam_v. \
    "${logs}/${name}_dp2.safetensors" "${logs}/${name}_ref.safetensors"
  grep "worst relative" "${logs}/${name}_2_ranks_equal_global_batch.log" |
    sed "s/^/${name}: /" | tee -a "${summary}"
  check "${name}_checkpoint_single_gpu_eval" "${here}/kiln-run" \
    "${here}/${name}_ref.kiln" --params "${logs}/${name}_dp2.safetensors" \
    --dataset "${data}" --batch-fields x,y
  if python3 -c "import safetensors.torch" 2>/dev/null; then
    check "${name}_checkpoint_pytorch_load" python3 -c \
      "import sys, safetensors.torch as s; t = s.load_file(sys.argv[1]); print(sorted(t)[:4], len(t))" \
      "${logs}/${name}_dp2.safetensors"
  else
    note "SKIP ${name}_checkpoint_pytorch_load (no safetensors.torch)"
  fi
  local t_ref t_dp2
  t_ref="$(ms_per_step "${logs}/${name}_global_batch_1gpu.log")"
  t_dp2="$(ms_per_step "${logs}/${name}_2_ranks.log")"
  python3 - "${name}" "${t_ref}" "${t_off1}" "${t_dp2}" <<'PY' | tee -a "${summary}"
import sys
name, ref, one, two = sys.argv[1], *map(float, sys.argv[2:])
print("%s: step time: 1 GPU global batch %.3f ms, 1 GPU per-rank batch %.3f ms, "
      "2 GPUs %.3f ms: speed-up %.2fx over 1 GPU (ideal 2), weak-scaling "
      "efficiency %.0f%%" % (name, ref, one, two, ref / two, 100 * one / two))
PY
}
model sine 1e-3 "${SINE_RTOL:-1e-3}" sine.kilndata
model block 3e-4 "${BLOCK_RTOL:-5e-2}" block.kilndata

note "$(grep -c '^PASS' "${summary}") passed, ${failures} failed, $(grep -c '^SKIP' "${summary}") skipped"
[[ ${failures} -eq 0 ]]
