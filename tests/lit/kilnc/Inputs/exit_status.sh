#!/bin/bash
# Runs a command with its output set aside and prints its exit status, so a
# lit test can check the exact status (`not` accepts any failure). The
# output goes to a temporary file: bazel's sandbox may not let a test write
# to /dev/null.
output="$(mktemp)"
"$@" >"${output}" 2>&1
status=$?
rm -f "${output}"
echo "exit status ${status}"
