#!/bin/bash
# bazel run //docs:update_ops_md: writes the op reference generated from the
# dialect's ODS to docs/ops.md in the checkout it is run from.
set -euo pipefail
if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
  echo "error: run this with bazel run //docs:update_ops_md" >&2
  exit 2
fi
cp "${RUNFILES_DIR:-$0.runfiles}/kiln/docs/ops.generated.md" \
  "${BUILD_WORKSPACE_DIRECTORY}/docs/ops.md"
chmod 644 "${BUILD_WORKSPACE_DIRECTORY}/docs/ops.md"
echo "wrote docs/ops.md"
