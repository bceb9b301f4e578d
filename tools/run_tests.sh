#!/bin/bash
# Installs what is missing, runs every test, and prints one line
# "N passed, N failed" counting individual test cases (gtest cases, lit files).
set -uo pipefail
cd "$(dirname "$0")/.."

tools/install_deps.sh || exit 1

# Count only this run's results: clear logs left by earlier runs first.
testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
[[ -n "${testlogs}" && -d "${testlogs}" ]] && rm -rf "${testlogs:?}"/*

bazel test //... "$@"
status=$?

# Every test target leaves a JUnit XML file; gtest and lit write one entry per
# test case, plain sh_tests one per target.
read -r passed failed < <(python3 tools/count_test_results.py bazel-testlogs)
echo "${passed} passed, ${failed} failed"
if [[ ${status} -ne 0 || ${failed} -ne 0 ]]; then
  exit 1
fi
