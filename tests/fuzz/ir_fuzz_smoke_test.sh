#!/bin/bash
# Mutates every sample and lit input a few thousand times through the text
# checks, the parser and the verifiers; any crash fails the test, and so do
# mutations of which fewer than half parse (the dictionary's token swaps are
# meant to reach the verifiers).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
dictionary="${TEST_TMPDIR}/kiln_ir.dict"
"${root}/tests/fuzz/make_dictionary.sh" "${root}" "${root}" "${dictionary}"
mapfile -t inputs < <(find "${root}/samples" "${root}/tests/lit" -name '*.mlir' | sort)
exec "${root}/tests/fuzz/ir_fuzz_driver" --dict="${dictionary}" --min-parsed=50 \
  --iterations=20000 --seed="${FUZZ_SEED:-20261130}" "${inputs[@]}"
