#!/bin/bash
# Mutates every sample and lit input a few thousand times through the parser
# and verifier; any crash fails the test.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
mapfile -t inputs < <(find "${root}/samples" "${root}/tests/lit" -name '*.mlir' | sort)
exec "${root}/tests/fuzz/ir_fuzz_driver" --iterations=20000 --seed="${FUZZ_SEED:-20261130}" "${inputs[@]}"
