#!/bin/bash
# The graph-level differential fuzzer in CI (tests/fuzz/graph): its
# self-test; every registered op generated or excluded with a reason; the
# graphs of a fixed seed and of a fresh one, printed here, so that a finding
# reproduces with `graph_fuzz.py run --bin DIR --seed SEED --first I
# --count 1` (and reduces with `graph_fuzz.py reduce`). GRAPH_FUZZ_SEED sets
# the fresh seed, GRAPH_FUZZ_COUNT the number of graphs per seed.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
bin="${TEST_TMPDIR}/bin"
mkdir -p "${bin}"
for tool in kilnc kiln-opt kiln-ref; do
  ln -sf "${root}/tools/${tool}/${tool}" "${bin}/${tool}"
done
fuzz="${root}/tests/fuzz/graph"
fixed=20261204
fresh="${GRAPH_FUZZ_SEED:-$(date +%s)}"
count="${GRAPH_FUZZ_COUNT:-100}"
junit="${XML_OUTPUT_FILE:-${TEST_TMPDIR}/graph_fuzz.xml}"
rm -f "${junit}"

status=0
/usr/bin/python3 "${fuzz}/selftest.py" --bin "${bin}" --work "${TEST_TMPDIR}/selftest" \
  --junit "${junit}" || status=1
/usr/bin/python3 "${fuzz}/graph_fuzz.py" ops --registered-ops "${root}/tests/ops/registered_ops" \
  --seed "${fixed}" --count "${count}" --junit "${junit}" || status=1
echo "fresh seed: ${fresh}"
for seed in "${fixed}" "${fresh}"; do
  /usr/bin/python3 "${fuzz}/graph_fuzz.py" run --bin "${bin}" --work "${TEST_TMPDIR}/seed${seed}" \
    --seed "${seed}" --count "${count}" --jobs 2 --nvrtc-every 75 --quiet --junit "${junit}" || status=1
done
exit "${status}"
