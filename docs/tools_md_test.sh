#!/bin/bash
# docs/tools.md must be what the tools' --help generates (docs/gen_tools_md.py).
#   tools_md_test.sh GENERATED COMMITTED
set -uo pipefail
if ! diff -u "$2" "$1" >"${TEST_TMPDIR:-/tmp}/tools_md.diff"; then
  head -60 "${TEST_TMPDIR:-/tmp}/tools_md.diff"
  echo
  echo "FAIL: docs/tools.md is stale (a tool's options changed): regenerate it with"
  echo "  bazel run //docs:update_tools_md"
  exit 1
fi
echo "PASS: docs/tools.md is what the tools' --help generates"
