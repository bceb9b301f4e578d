#!/bin/bash
# Runs check_op_examples.py: every example of docs/ops.md verifies.
#   op_examples_test.sh CHECK_OP_EXAMPLES KILN_OPT OPS_MD
set -euo pipefail
exec python3 "$1" "$2" "$3"
