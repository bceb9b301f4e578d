#!/bin/bash
# Runs on the GPU machine, from inside the bundle made by make_bundle.sh:
#   run.sh LOGDIR
# The soak (100,000 steps with the device pool, host memory and step time
# flat), updates skipped on NaN batches without touching the state, f16 with
# dynamic loss scaling, and a dataset larger than the build machine's memory
# streamed with bounded host memory. Prints PASS/FAIL per check and a summary;
# exits non-zero if anything failed.
#
# KILN_SANITIZER=memcheck|racecheck|synccheck|initcheck runs every GPU
# process under compute-sanitizer with reduced step counts (and the streamed
# dataset small): any error fails the check.
# OOC_DIR: where the large dataset is written (default /tmp/kiln-ooc; it is
# removed afterwards); OOC_RECORDS: its records (default 1,700,000 of 16,388
# bytes, 25.9 GiB).
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
passed=0 failed=0
record() { # name status
  if [[ $2 -eq 0 ]]; then passed=$((passed + 1)); echo "PASS $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
run=(./kiln-run)
soak_steps=100000 log_every=2000 skip_steps=200 f16_steps=2000
ooc_records="${OOC_RECORDS:-1700000}"
if [[ -n "${KILN_SANITIZER:-}" ]]; then
  run=(./sanitized.sh "${KILN_SANITIZER}" ./kiln-run)
  soak_steps=300 log_every=50 skip_steps=20 f16_steps=50 ooc_records=4096
fi
regression=(--dataset regression.kilndata --batch-fields x,y)

# Soak: the pool, host memory and step time stay flat.
"${run[@]}" mlp_skip.kiln --steps "${soak_steps}" "${regression[@]}" --lr 1e-3 \
  --log-every "${log_every}" --checkpoint "${logs}/soak.safetensors" \
  --checkpoint-every $((soak_steps / 4)) >"${logs}/soak.log" 2>&1 &&
  python3 check_soak.py "${logs}/soak.log" | tee "${logs}/soak-summary.txt"
record "soak:${soak_steps} steps" "${PIPESTATUS[0]}"

# NaN and infinite inputs: every update skipped and counted, nothing changed;
# training then goes on from the same state.
log="${logs}/nonfinite.log"
{
  "${run[@]}" mlp_skip.kiln --steps "${skip_steps}" "${regression[@]}" --lr 1e-2 \
    --checkpoint "${logs}/before_nan.safetensors" &&
  "${run[@]}" mlp_skip.kiln --resume "${logs}/before_nan.safetensors" \
    --steps $((skip_steps + 10)) --inputs nan_batch.safetensors \
    --allow-nonfinite-inputs --lr 1e-2 --checkpoint "${logs}/after_nan.safetensors" &&
  python3 check_skipped.py "${logs}/before_nan.safetensors" \
    "${logs}/after_nan.safetensors" 10 &&
  "${run[@]}" mlp_skip.kiln --resume "${logs}/after_nan.safetensors" \
    --steps $((skip_steps * 6)) "${regression[@]}" --lr 1e-2 \
    --checkpoint "${logs}/after_recovery.safetensors"
} >"${log}" 2>&1
record "nonfinite:skipped and counted" $?

# f16 with dynamic loss scaling: overflows halve the scale, the run trains.
log="${logs}/f16_loss_scale.log"
"${run[@]}" sine_block_f16.kiln --steps "${f16_steps}" --dataset sine.kilndata \
  --batch-fields x,y --lr 3e-3 --schedule cosine --warmup 50 \
  --log-every $((f16_steps / 10)) >"${log}" 2>&1 &&
  grep -q "^skipped updates (non-finite gradients): .*loss scale" "${log}" &&
  { [[ -n "${KILN_SANITIZER:-}" ]] ||
    awk '/final loss/ { found = 1; ok = ($NF + 0 < 0.05) } END { exit !(found && ok) }' "${log}"; }
record "f16:dynamic loss scale" $?

# Out-of-core: a dataset larger than 24 GiB streamed once, in file order.
ooc_dir="${OOC_DIR:-/tmp/kiln-ooc}"
mkdir -p "${ooc_dir}"
log="${logs}/out_of_core.log"
{
  start=$(date +%s)
  ./make_dataset --task wide --features 4096 --records "${ooc_records}" --seed 3 \
    --out "${ooc_dir}/wide.kilndata" &&
  echo "generated in $(($(date +%s) - start)) s: $(stat -c %s "${ooc_dir}/wide.kilndata") bytes," \
    "$(du -k "${ooc_dir}/wide.kilndata" | cut -f1) KiB allocated on disk" &&
  free -m &&
  "${run[@]}" wide_regression.kiln --steps $((ooc_records / 256)) \
    --dataset "${ooc_dir}/wide.kilndata" --batch-fields x,y --no-shuffle \
    --lr 1e-3 --log-every $((ooc_records / 256 / 20))
} >"${log}" 2>&1
status=$?
rm -rf "${ooc_dir}"
if [[ ${status} -eq 0 && -z "${KILN_SANITIZER:-}" ]]; then
  # The file is larger than 24 GiB; the process stayed under 4 GiB.
  awk '/^generated in/ { size = $5 }
       /host peak resident/ { rss = $(NF - 1) }
       END { ok = size > 24 * 2^30 && rss > 0 && rss < 4096
             printf "dataset %.1f GiB, host peak resident %.0f MiB\n", size / 2^30, rss
             exit ok ? 0 : 1 }' "${log}" |
    tee -a "${log}"
  status=${PIPESTATUS[0]}
fi
record "out-of-core:streamed" "${status}"

echo "${passed} passed, ${failed} failed" | tee "${logs}/summary.txt"
[[ ${failed} -eq 0 ]]
