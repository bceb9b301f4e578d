#!/bin/bash
# Writes the node tests of opsets 18 to 21 (make_node_tests.py, fresh random
# inputs every run) and runs them through the importer and the CPU
# reference: every one must pass. run_node_tests.sh RUNNER GENERATOR
set -euo pipefail
runner="$1" generator="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}/node_tests"
rm -rf "${out}"
mkdir -p "${out}"
count="$(/usr/bin/python3 "${generator}" "${out}")"
"${runner}" --data "${out}" --min-pass "${count}"
