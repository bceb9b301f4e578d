#!/bin/bash
# Runs the C program c_api_c_test against the CPU stand-in driver with the
# artifacts of make_test_files and the MLP sample.
#   c_api_c_test.sh C_API_C_TEST MAKE_TEST_FILES MLP_KILN FAKE_LIBCUDA
set -uo pipefail
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/c_api.XXXXXX")"
"$2" "${work}" >/dev/null || { echo "make_test_files failed"; exit 1; }
export KILN_LIBCUDA_PATH="$(realpath "$4")"
"$1" "${work}/linreg.kiln" "${work}/predict.kiln" "$3" "${work}/mlp.ckpt"
