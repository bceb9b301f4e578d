#!/bin/bash
# bazel run //docs:update_tools_md: writes the tools reference generated from
# the tools' --help (docs/gen_tools_md.py) to docs/tools.md in the checkout it
# is run from.
set -euo pipefail
if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
  echo "error: run this with bazel run //docs:update_tools_md" >&2
  exit 2
fi
cp "${RUNFILES_DIR:-$0.runfiles}/kiln/docs/tools.generated.md" \
  "${BUILD_WORKSPACE_DIRECTORY}/docs/tools.md"
chmod 644 "${BUILD_WORKSPACE_DIRECTORY}/docs/tools.md"
echo "wrote docs/tools.md"
