#!/bin/bash
# Runs check_docs.py over the docs (paths relative to the workspace root).
#   check_docs_test.sh CHECK_DOCS KILN_OPT DOC...
set -euo pipefail
check="$1"
kiln_opt="$2"
shift 2
exec python3 "${check}" --kiln-opt "${kiln_opt}" --root . "$@"
