#!/bin/sh
# exit_status.sh COMMAND...: runs COMMAND with its stderr on its stdout and
# prints "exit status N" after its output, for FileCheck.
"$@" 2>&1
echo "exit status $?"
