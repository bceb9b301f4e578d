#!/bin/bash
# Runs, on the GPU machine, several carried bundles in one call, in the order
# given, within LIMIT seconds (default 575):
#   tools/run_gpu_bundles.sh OUT BUNDLE.tar.xz...
# Each tarball is one bundle folder of a make_*bundle.sh script, recognised
# by what it holds:
#   zoo_speed.py          bench/make_zoo_speed_bundle.sh: the speed table
#                         (kiln, eager and torch.compile; SPEED_BUDGET seconds,
#                         default what is left less 20; VARIANTS to choose);
#   run_gpu_cases.sh      tests/fuzz/graph/make_gpu_bundle.sh: generated graphs
#                         (KILN_JOBS cases at once, default 8; at most 150 s);
#   MODELS and run.sh     tests/zoo/make_gpu_bundle.sh: the zoo's checks;
#   mlp_batch.py, run.sh  sdk/examples/gpu/make_bundle.sh: the SDK's users.
# OUT gets gpu.txt (the card, driver, PyTorch), summary.txt (each bundle's
# result lines and exit status), the speed run's zoo_speed.md and .log, and
# logs.tar.xz with every log: few files, as a run's returned files are.
set -u
out="$(realpath -m "${1:?usage: run_gpu_bundles.sh OUT BUNDLE.tar.xz...}")"
shift
limit="${LIMIT:-575}" start="$(date +%s)"
left() { echo $((limit - ($(date +%s) - start))); }
work="$(mktemp -d)"
mkdir -p "${out}" "${work}/logs"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__)"
  date -u; } >"${out}/gpu.txt" 2>&1
summary="${out}/summary.txt"
for tarball in "$@"; do
  name="$(basename "${tarball}" .tar.xz)" logs="${work}/logs/$(basename "${tarball}" .tar.xz)"
  echo "== ${name} ($(date -u +%T), $(left) s left)" >>"${summary}"
  if ! tar -xJf "${tarball}" -C "${work}" || [[ ! -d "${work}/${name}" ]]; then
    echo "no bundle folder ${name} in ${tarball}" >>"${summary}"
    continue
  fi
  bundle="${work}/${name}"
  if [[ -f "${bundle}/zoo_speed.py" ]]; then
    (cd "${bundle}" && timeout "$(left)" python3 zoo_speed.py run "${logs}" \
      --budget "${SPEED_BUDGET:-$(($(left) - 20))}" \
      --variants "${VARIANTS:-kiln,eager,compile}") >"${logs}.out" 2>&1
    status=$?
    cp "${logs}/zoo_speed.md" "${logs}/zoo_speed.log" "${out}/" 2>/dev/null
  elif [[ -f "${bundle}/run_gpu_cases.sh" ]]; then
    seconds=$(($(left) < 150 ? $(left) : 150))
    KILN_JOBS="${KILN_JOBS:-8}" timeout "${seconds}" "${bundle}/run_gpu_cases.sh" \
      "${bundle}" "${logs}" >"${logs}.summary.txt" 2>&1
    status=$?
    tail -n 3 "${logs}.summary.txt" >>"${summary}"
  elif [[ -f "${bundle}/run.sh" ]]; then  # the zoo's and the SDK's
    timeout "$(($(left) - 10))" "${bundle}/run.sh" "${logs}" >>"${summary}" 2>&1
    status=$?
  else
    echo "${name}: not a bundle this script knows" >>"${summary}"
    status=2
  fi
  echo "exit ${status} ($(left) s left)" >>"${summary}"
  rm -rf "${bundle}"
done
tar -cJf "${out}/logs.tar.xz" -C "${work}" logs
