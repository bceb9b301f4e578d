#!/bin/bash
# run.sh and compare.py without a GPU: a stand-in kiln-run that writes its
# inputs back as its output (the same bits every run) must pass; one whose
# serial runs change a byte of a tensor must fail, naming that tensor; one
# that fails must fail the case; under KILN_SANITIZER every run goes through
# sanitized.sh (a stand-in compute-sanitizer here), once per mode.
#   run_test.sh RUN_SH COMPARE_PY DRAW_INPUTS MAKE_TEST_FILES SANITIZED_SH
set -uo pipefail
run_sh=$(realpath "$1") compare_py=$(realpath "$2") draw=$(realpath "$3")
make_files=$(realpath "$4") sanitized=$(realpath "$5")
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail() { echo "FAIL: $*" >&2; exit 1; }

bundle="${tmp}/bundle"
mkdir -p "${bundle}"
mkdir -p "${tmp}/files"
"${make_files}" "${tmp}/files" >/dev/null || fail "make_test_files"
cp "${tmp}/files/linreg.kiln" "${bundle}/"
cp "${run_sh}" "${compare_py}" "${draw}" "${sanitized}" "${bundle}/"
printf 'linreg train train_step\nlinreg_grads run forward_backward linreg\n' \
  >"${bundle}/CASES"
cat >"${bundle}/kiln-run" <<'FAKE'
#!/bin/bash
# Writes the --inputs file to --output or --checkpoint; FAKE_MODE=differ
# flips the last byte (a tensor's) under --serial-launches, FAKE_MODE=fail
# exits 1.
set -eu
inputs="" out="" serial=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --inputs) inputs=$2; shift ;;
    --output|--checkpoint) out=$2; shift ;;
    --serial-launches) serial=1 ;;
  esac
  shift
done
[[ "${FAKE_MODE:-}" == fail ]] && exit 1
cp "${inputs}" "${out}"
if [[ "${FAKE_MODE:-}" == differ && ${serial} -eq 1 ]]; then
  python3 - "${out}" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-1] ^= 1
open(sys.argv[1], "wb").write(data)
PY
fi
FAKE
chmod +x "${bundle}/kiln-run"

FAKE_MODE=same "${bundle}/run.sh" "${tmp}/same" >"${tmp}/same.out" 2>&1 ||
  { cat "${tmp}/same.out"; fail "identical runs did not pass"; }
grep -q "^PASS linreg: 6 files bit-identical" "${tmp}/same/summary.txt" ||
  fail "no PASS line for linreg"
grep -q "^2 passed, 0 failed" "${tmp}/same/summary.txt" || fail "summary"

if FAKE_MODE=differ "${bundle}/run.sh" "${tmp}/differ" >"${tmp}/differ.out" 2>&1; then
  fail "runs that differ passed"
fi
grep -q "^FAIL linreg: 3 of 5 files differ" "${tmp}/differ/summary.txt" ||
  { cat "${tmp}/differ/summary.txt"; fail "no FAIL line for linreg"; }
grep -qE "^  [xy]: 1 of [0-9]+ elements differ" "${tmp}/differ/summary.txt" ||
  fail "the differing tensor is not named"

if FAKE_MODE=fail "${bundle}/run.sh" "${tmp}/fail" >"${tmp}/fail.out" 2>&1; then
  fail "failing runs passed"
fi
grep -q "^FAIL linreg: a kiln-run failed" "${tmp}/fail/summary.txt" ||
  fail "no FAIL line for a failing kiln-run"
# compute-sanitizer ARGS... PROGRAM ARGS: runs PROGRAM (after the tool's
# options, which all take a value) and counts the runs.
mkdir -p "${tmp}/bin"
cat >"${tmp}/bin/compute-sanitizer" <<FAKE
#!/bin/bash
while [[ "\$1" == --* ]]; do shift 2; done
echo run >>"${tmp}/sanitized_runs"
exec "\$@"
FAKE
chmod +x "${tmp}/bin/compute-sanitizer"
PATH="${tmp}/bin:${PATH}" KILN_SANITIZER=memcheck FAKE_MODE=same \
  "${bundle}/run.sh" "${tmp}/sanitized" >"${tmp}/sanitized.out" 2>&1 ||
  { cat "${tmp}/sanitized.out"; fail "sanitized runs did not pass"; }
grep -q "^PASS linreg: 2 files bit-identical" "${tmp}/sanitized/summary.txt" ||
  fail "sanitized: not one run per mode"
[[ $(wc -l <"${tmp}/sanitized_runs") -eq 4 ]] ||
  fail "sanitized: $(wc -l <"${tmp}/sanitized_runs") runs went through compute-sanitizer, not 4"
echo "run_test: ok"
