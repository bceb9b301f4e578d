#!/bin/bash
# Installs what is missing, runs every test, and prints one line
# "N passed, N failed" counting individual test cases (gtest cases, lit files).
#
# Every test executes in every run (--nocache_test_results, also in .bazelrc):
# builds may come from the disk cache, test results never do. A result that
# Bazel nevertheless took from a cache counts as a failure of its target.
set -uo pipefail
cd "$(dirname "$0")/.."

tools/install_deps.sh || exit 1

# Count only this run's results: clear logs left by earlier runs first.
testlogs="$(bazel info bazel-testlogs 2>/dev/null)"
[[ -n "${testlogs}" && -d "${testlogs}" ]] && rm -rf "${testlogs:?}"/*
events="$(mktemp)"
trap 'rm -f "${events}"' EXIT

bazel test //... --nocache_test_results --build_event_json_file="${events}" "$@"
status=$?

# Every test target leaves a JUnit XML file; gtest and lit write one entry per
# test case, plain sh_tests one per target.
read -r passed failed < <(python3 tools/count_test_results.py bazel-testlogs \
  --events "${events}")
echo "${passed} passed, ${failed} failed"
if [[ ${status} -ne 0 || ${failed} -ne 0 ]]; then
  exit 1
fi
