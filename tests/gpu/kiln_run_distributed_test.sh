#!/bin/bash
# Data-parallel training through kiln-run, ranks as processes:
#   kiln_run_distributed_test.sh <kiln-run> <make_test_files>
# on the CPU stand-ins for libcuda and libnccl (KILN_LIBCUDA_PATH,
# KILN_NCCL_LIBRARY, KILN_FAKE_CUDA_DEVICES set by the BUILD rule):
# --nproc 2 and 4 start-up, each equal to one rank on the global batches;
# torchrun's variables with a TCP rendezvous; one rank through NCCL equal to
# none; a rank that dies (the others exit non-zero, naming it, in time);
# missing NCCL and bad command lines.
set -uo pipefail
kiln_run="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
make_files="$2"
for v in KILN_LIBCUDA_PATH KILN_NCCL_LIBRARY; do
  if [[ -n "${!v:-}" && "${!v}" != /* ]]; then
    export "${v}=$(pwd)/${!v}"
  fi
done
work="${TEST_TMPDIR:-$(mktemp -d)}/kiln_run_distributed"
mkdir -p "${work}"
export TMPDIR="${work}"
"${make_files}" "${work}" || { echo "make_test_files failed"; exit 1; }
cd "${work}"

failures=0
expect() {
  local want="$1" what="$2"
  shift 2
  "$@" >"${what}.log" 2>&1
  local got=$?
  if [[ ${got} -ne ${want} ]]; then
    echo "FAIL ${what}: exit ${got}, expected ${want}"
    sed 's/^/    /' "${what}.log"
    failures=$((failures + 1))
  else
    echo "ok   ${what}"
  fi
}
must_print() {
  if ! grep -qF -- "$2" "$1.log"; then
    echo "FAIL $1: output lacks '$2'"
    sed 's/^/    /' "$1.log"
    failures=$((failures + 1))
  fi
}
# same_params <what> <a> <b> <rtol>: the f32 tensors w and b of two
# checkpoints agree within rtol (0: bit for bit); with rtol "differ", they
# must not.
same_params() {
  if ! python3 - "$2" "$3" "$4" <<'PY' >"$1.compare.log" 2>&1; then
import json, struct, sys
def load(path):
    data = open(path, 'rb').read()
    n = struct.unpack('<Q', data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == '__metadata__' or info['dtype'] != 'F32':
            continue
        a, b = info['data_offsets']
        raw = data[8 + n + a:8 + n + b]
        out[name] = struct.unpack('<%df' % (len(raw) // 4), raw)
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
if sys.argv[3] == 'differ':
    if a['w'] == b['w']:
        sys.exit('w is the same in both')
    print('w differs')
    sys.exit(0)
rtol = float(sys.argv[3])
for name in ('w', 'b'):
    if len(a[name]) != len(b[name]) or not a[name]:
        sys.exit('%s has %d and %d elements' % (name, len(a[name]), len(b[name])))
    for x, y in zip(a[name], b[name]):
        if abs(x - y) > rtol * (1 + abs(y)):
            sys.exit('%s differs: %r vs %r' % (name, x, y))
print('w and b agree')
PY
    echo "FAIL $1: the parameters differ"
    sed 's/^/    /' "$1.compare.log"
    failures=$((failures + 1))
  else
    echo "ok   $1 ($(cat "$1.compare.log"))"
  fi
}

train=(--steps 6 --dataset linreg.kilndata --batch-fields x,y --lr 0.05 --seed 3)

# One rank on global batches of 16, the reference.
expect 0 one_rank "${kiln_run}" linreg_sgd16.kiln "${train[@]}" \
  --checkpoint one.safetensors

# Training moves the parameters (the comparisons below are not of initial
# values).
expect 0 untrained "${kiln_run}" linreg_sgd16.kiln --steps 0 \
  --dataset linreg.kilndata --batch-fields x,y --seed 3 \
  --checkpoint initial.safetensors
same_params training_moves_parameters one.safetensors initial.safetensors differ

# 2 and 4 ranks, each on its slice of the same global batches.
expect 0 nproc2 "${kiln_run}" linreg_dp8.kiln --nproc 2 "${train[@]}" \
  --checkpoint two.safetensors
must_print nproc2 "data parallel: 2 ranks, global batches of 2 x 8 records"
must_print nproc2 "wrote checkpoint two.safetensors (step 6)"
same_params nproc2_equals_one_rank two.safetensors one.safetensors 1e-5
expect 0 nproc4 "${kiln_run}" linreg_dp4.kiln --nproc 4 "${train[@]}" \
  --checkpoint four.safetensors
must_print nproc4 "data parallel: 4 ranks, global batches of 4 x 4 records"
same_params nproc4_equals_one_rank four.safetensors one.safetensors 1e-5
if compgen -G "kiln-run-*" >"leftovers.log"; then
  echo "FAIL the launcher left its rendezvous folder"
  failures=$((failures + 1))
fi

# torchrun's variables: rank 0 listens on MASTER_ADDR:MASTER_PORT.
port=$((20000 + RANDOM % 20000))
for r in 0 1; do
  KILN_DISTRIBUTED_TIMEOUT_S=20 RANK=${r} LOCAL_RANK=${r} WORLD_SIZE=2 \
    MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=${port} "${kiln_run}" linreg_dp8.kiln "${train[@]}" \
    --checkpoint tcp.safetensors >"tcp_rank${r}.log" 2>&1 &
  pids[${r}]=$!
done
tcp_ok=1
for r in 0 1; do wait "${pids[${r}]}" || tcp_ok=0; done
if [[ ${tcp_ok} -eq 1 ]]; then
  echo "ok   torchrun_variables"
  same_params tcp_equals_one_rank tcp.safetensors one.safetensors 1e-5
else
  echo "FAIL torchrun_variables"
  sed 's/^/    /' tcp_rank0.log tcp_rank1.log
  failures=$((failures + 1))
fi

# One rank through NCCL trains exactly as without it.
expect 0 single_nccl "${kiln_run}" linreg_dp8.kiln --distributed=nccl \
  "${train[@]}" --checkpoint nccl1.safetensors
expect 0 single_off "${kiln_run}" linreg_dp8.kiln --distributed=off \
  "${train[@]}" --checkpoint off1.safetensors
same_params single_nccl_equals_none nccl1.safetensors off1.safetensors 0

# A rank that dies at its 5th collective (the 3rd step): the launcher
# reports it, rank 0 fails by itself naming it, well within the timeout.
start=$(date +%s)
KILN_FAKE_NCCL_EXIT_AT=1:4 expect 1 rank_dies "${kiln_run}" linreg_dp8.kiln \
  --nproc 2 "${train[@]}"
elapsed=$(($(date +%s) - start))
must_print rank_dies "kiln-run: rank 1 of 2 (pid"
must_print rank_dies "exited with status 17"
must_print rank_dies "kiln-run (rank 0 of 2): UNAVAILABLE: step 3: rank 0: entry 'train_step'"
must_print rank_dies "rank 1 (pid "
must_print rank_dies "kiln-run: 2 of 2 ranks failed"
if [[ ${elapsed} -gt 20 ]]; then
  echo "FAIL rank_dies took ${elapsed} s"
  failures=$((failures + 1))
fi

# The launcher, terminated, stops its ranks and ends with 128 + SIGTERM.
"${kiln_run}" linreg_dp8.kiln --nproc 2 --steps 100000000 --dataset linreg.kilndata \
  --batch-fields x,y --lr 0.01 >stopped.log 2>&1 &
launcher=$!
sleep 2
kill -TERM "${launcher}"
start=$(date +%s)
wait "${launcher}"
stopped=$?
if [[ ${stopped} -ne 143 || $(($(date +%s) - start)) -gt 15 ]]; then
  echo "FAIL launcher_stops_ranks: exit ${stopped} after $(($(date +%s) - start)) s"
  sed 's/^/    /' stopped.log
  failures=$((failures + 1))
else
  echo "ok   launcher_stops_ranks"
fi
must_print stopped "kiln-run: Terminated: stopping the ranks"

# A rank that never arrives: the rendezvous times out naming it.
KILN_DISTRIBUTED_TIMEOUT_S=1 RANK=0 WORLD_SIZE=2 \
  KILN_RENDEZVOUS_FILE="${work}/lonely" expect 1 rank_missing \
  "${kiln_run}" linreg_dp8.kiln "${train[@]}"
must_print rank_missing "rank 0: rank 1 did not arrive at the rendezvous"

# Without NCCL.
KILN_NCCL_LIBRARY=/nonexistent/libnccl.so.2 expect 1 no_nccl "${kiln_run}" \
  linreg_dp8.kiln --nproc 2 "${train[@]}"
must_print no_nccl "/nonexistent/libnccl.so.2 not found"

# Command lines.
expect 2 nproc_inference "${kiln_run}" linreg_dp8.kiln --nproc 2 \
  --entry forward --inputs batch.safetensors
must_print nproc_inference "--nproc trains: it needs --steps"
expect 2 bad_mode "${kiln_run}" linreg_dp8.kiln --distributed=mpi "${train[@]}"
must_print bad_mode "--distributed: 'mpi' is not auto, nccl or off"
RANK=0 WORLD_SIZE=2 expect 1 no_rendezvous "${kiln_run}" linreg_dp8.kiln \
  "${train[@]}"
must_print no_rendezvous "no rendezvous: set KILN_RENDEZVOUS_FILE, or MASTER_ADDR and MASTER_PORT"

if [[ ${failures} -ne 0 ]]; then
  echo "${failures} check(s) failed"
  exit 1
fi
echo "all checks passed"
