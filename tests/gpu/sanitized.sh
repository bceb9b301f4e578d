#!/bin/bash
# Runs a GPU program under NVIDIA's compute-sanitizer:
#
#   sanitized.sh TOOL PROGRAM ARGS...
#
# TOOL is memcheck, racecheck, synccheck or initcheck. Exits with the
# program's status, or 97 when the tool reported an error. The tool's report
# (ending in its summary line) follows the program's output on stderr. API
# errors are left to the program (tests provoke some on purpose). A run that
# ends before touching CUDA (a usage error, a refused file) has nothing to
# check: it is run again without the tool, for its own exit status.
set -u
tool="$1"
shift
report="$(mktemp)"
trap 'rm -f "${report}"' EXIT
compute-sanitizer --tool "${tool}" --error-exitcode 97 --print-limit 20 \
  --report-api-errors no --log-file "${report}" "$@"
status=$?
if [[ ${status} -ne 0 ]] && grep -q "terminated before first instrumented API call" "${report}"; then
  "$@"
  exit $?
fi
cat "${report}" >&2
exit "${status}"
