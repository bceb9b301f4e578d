#!/bin/bash
# Mutates the samples and the op-coverage models a thousand times and runs
# each mutation that parses through kilnc's whole pipeline, for inference
# and for bf16 training; a crash or a failure without a located error fails
# the test.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
dictionary="${TEST_TMPDIR}/kiln_ir.dict"
"${root}/tests/fuzz/make_dictionary.sh" "${root}" "${root}" "${dictionary}"
mapfile -t inputs < <(find "${root}/samples" "${root}/tests/ops/models" -maxdepth 1 -name '*.mlir' | sort)
exec "${root}/tests/fuzz/pipeline_fuzz_driver" --dict="${dictionary}" \
  --iterations=1000 --seed="${FUZZ_SEED:-20261202}" "${inputs[@]}"
