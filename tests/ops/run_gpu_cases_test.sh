#!/bin/bash
# run_gpu_cases.sh without a GPU: a stand-in kiln-run answers each case as
# the real one would, so that the runner's own part is checked: the flags a
# case's tolerance file asks for, and a FAIL line that names the tensors
# that missed (or, after an error, the log's last lines).
set -euo pipefail
runner="$(pwd)/tests/ops/run_gpu_cases.sh"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/run_gpu_cases.XXXXXX")"
cases="${work}/cases"
mkdir -p "${cases}"
echo 1 >"${cases}/SEED"
for name in shared.bf16_adamw own.bf16_adamw missed.f32_sgd broken.inference; do
  touch "${cases}/${name}.kiln" "${cases}/${name}.expected.safetensors"
  echo forward_backward >"${cases}/${name}.entry"
done
echo "1e-1 5e-2 gradients" >"${cases}/shared.bf16_adamw.bf16-tolerance"
echo "1e-1 5e-2" >"${cases}/own.bf16_adamw.bf16-tolerance"
# The stand-in: a cancelling gradient passes only on the shared scale; the
# f32 case misses in one tensor of three; the inference case cannot start.
cat >"${work}/kiln-run" <<'STANDIN'
#!/bin/bash
case "$1" in
  *.bf16_adamw.kiln)
    if [[ " $* " == *" --scaled-atol "* && " $* " == *" --shared-gradient-scale "* ]]; then
      echo "check grad.p1: ok (2 elements)"; exit 0
    fi
    echo "check grad.p1: MISMATCH 2 of 2 elements (0 NaN); first at 0: 0 vs expected 1e-17"
    echo "check grad.p2: ok (1 elements)"; exit 1 ;;
  *.f32_sgd.kiln)
    echo "check grad.p0: ok (4 elements)"
    echo "check grad.p1: MISMATCH 1 of 4 elements (0 NaN); first at 3: 2 vs expected 1"
    echo "check loss: ok (1 elements)"
    echo "summary line one"; echo "summary line two"; exit 1 ;;
  *) echo "error: no NVIDIA driver on this machine" >&2; exit 1 ;;
esac
STANDIN
chmod +x "${work}/kiln-run"
status=0
KILN_RUN="${work}/kiln-run" KILN_JOBS=2 "${runner}" "${cases}" "${work}/logs" >"${work}/out" || status=$?
cat "${work}/out"
fail() { echo "FAILED: $*"; exit 1; }
[[ ${status} -ne 0 ]] || fail "the runner passed with failing cases"
expect() { grep -qxF -- "$1" "${work}/out" || fail "no line '$1'"; }
expect "PASS ops:shared.bf16_adamw"
expect "FAIL ops:own.bf16_adamw: check grad.p1: MISMATCH 2 of 2 elements (0 NaN); first at 0: 0 vs expected 1e-17 "
expect "FAIL ops:missed.f32_sgd: check grad.p1: MISMATCH 1 of 4 elements (0 NaN); first at 3: 2 vs expected 1 "
expect "FAIL ops:broken.inference: error: no NVIDIA driver on this machine "
expect "1 passed, 3 failed"
echo "PASS"
