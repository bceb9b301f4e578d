#!/bin/bash
# docs/ops.md must be what the dialect's ODS generates (docs/gen_ops_md.sh).
#   ops_md_test.sh GENERATED COMMITTED
set -uo pipefail
if ! diff -u "$2" "$1" >"${TEST_TMPDIR:-/tmp}/ops_md.diff"; then
  head -40 "${TEST_TMPDIR:-/tmp}/ops_md.diff"
  echo
  echo "FAIL: docs/ops.md is stale (the .td descriptions changed): regenerate it with"
  echo "  bazel run //docs:update_ops_md"
  exit 1
fi
echo "PASS: docs/ops.md is what the ODS generates"
