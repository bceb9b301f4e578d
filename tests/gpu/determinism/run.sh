#!/bin/bash
# The determinism check, on the GPU machine, from the bundle folder that
# make_bundle.sh made:
#   ./run.sh LOGDIR
# For every case of CASES ("NAME train ENTRY" or "NAME run ENTRY", then the
# artifact's name where it is not NAME.kiln): draws the entry's inputs once
# (draw_inputs, seed 1), then runs kiln-run RUNS times with its default
# launches and RUNS times with --serial-launches, all with seed 1 on those
# inputs. A training case trains STEPS steps and writes a
# checkpoint (parameters, master weights, optimizer and model state); a run
# case calls ENTRY once and writes its outputs (gradients included). Every
# file must hold the same bits as the first: compare.py checks them tensor
# by tensor and names each tensor that differs. LOGDIR gets summary.txt
# (one PASS or FAIL line per case, the differing tensors under a FAIL) and
# runs/ (each kiln-run's output). Exit status 0 when every case passed.
#
# RUNS (3), STEPS (5), JOBS (kiln-run processes at a time, 6), ONLY (a regex
# of the case names to run, all by default), WORK (where the checkpoints go,
# a temporary folder by default). KILN_SANITIZER=memcheck|racecheck|
# synccheck|initcheck runs every kiln-run under compute-sanitizer
# (sanitized.sh; an error it reports fails the case), by default once per
# mode, two steps, one at a time.
set -uo pipefail
cd "$(dirname "$0")"
log="${1:?usage: run.sh LOGDIR}"
sanitize=""
if [[ -n "${KILN_SANITIZER:-}" ]]; then
  sanitize="./sanitized.sh ${KILN_SANITIZER}"
  : "${RUNS:=1}" "${STEPS:=2}" "${JOBS:=1}"
fi
runs="${RUNS:-3}" steps="${STEPS:-5}" parallel="${JOBS:-6}" only="${ONLY:-.}"
mkdir -p "${log}/runs"
log="$(cd "${log}" && pwd)"
work="${WORK:-$(mktemp -d)}"
mkdir -p "${work}"
summary="${log}/summary.txt"
: >"${summary}"
passed=0
failed=0

# Runs the commands of the array named $1, PARALLEL at a time; each element
# is "LOGFILE COMMAND...". Returns the number that failed.
run_all() {
  local -n list=$1
  local pids=() next=0 bad=0 words
  for line in "${list[@]}"; do
    read -r -a words <<<"${line}"
    "${words[@]:1}" >"${words[0]}" 2>&1 &
    pids+=($!)
    if ((${#pids[@]} - next >= parallel)); then
      wait "${pids[next]}" || bad=$((bad + 1))
      next=$((next + 1))
    fi
  done
  for (( ; next < ${#pids[@]}; ++next)); do
    wait "${pids[next]}" || bad=$((bad + 1))
  done
  return "${bad}"
}

while read -r name kind entry artifact; do
  [[ -z "${name}" || "${name}" == \#* ]] && continue
  [[ "${name}" =~ ${only} ]] || continue
  model="${artifact:-${name}}.kiln"
  start=${SECONDS}
  inputs="${work}/${name}.inputs.safetensors"
  if ! ./draw_inputs "${model}" "${entry}" 1 "${inputs}" \
      >"${log}/runs/${name}.draw.log" 2>&1; then
    echo "FAIL ${name}: draw_inputs: $(cat "${log}/runs/${name}.draw.log")" |
      tee -a "${summary}"
    failed=$((failed + 1))
    continue
  fi
  commands=()
  outputs=()
  for mode in default serial; do
    flags=""
    [[ "${mode}" == serial ]] && flags="--serial-launches"
    for ((i = 1; i <= runs; ++i)); do
      out="${work}/${name}.${mode}.${i}.safetensors"
      outputs+=("${out}")
      if [[ "${kind}" == train ]]; then
        what="--steps ${steps} --checkpoint ${out}"
      else
        what="--entry ${entry} --output ${out}"
      fi
      commands+=("${log}/runs/${name}.${mode}.${i}.log ${sanitize} ./kiln-run ${model} \
--inputs ${inputs} --seed 1 ${what} ${flags}")
    done
  done
  if ! run_all commands; then
    echo "FAIL ${name}: a kiln-run failed (runs/${name}.*.log)" |
      tee -a "${summary}"
    failed=$((failed + 1))
    continue
  fi
  if python3 compare.py "${name}" "${outputs[@]}" >"${work}/compare.txt"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  # Names relative to WORK: the report reads the same wherever it ran.
  sed "s|${work}/||g" "${work}/compare.txt" | tee -a "${summary}"
  echo "  (${name}: $((SECONDS - start)) s)"
  rm -f "${outputs[@]}"
done <CASES
echo "${passed} passed, ${failed} failed" | tee -a "${summary}"
[[ ${failed} -eq 0 ]]
