#!/bin/bash
# Bazel's --workspace_status_command (see .bazelrc): prints the stamp keys the
# build embeds. STABLE_ keys are inputs of the actions that read them, so a
# new commit reruns //tools/common:build_commit (and nothing else) and a cache
# never hands back another commit's output.
#
# STABLE_KILN_COMMIT: the short hash of HEAD when the workspace is the top of
# a git checkout (not merely inside someone else's), else "unknown".
commit=unknown
if top="$(git rev-parse --show-toplevel 2>/dev/null)" && [[ "${top}" -ef . ]]; then
  commit="$(git rev-parse --short=7 HEAD 2>/dev/null)" || commit=unknown
fi
echo "STABLE_KILN_COMMIT ${commit}"
