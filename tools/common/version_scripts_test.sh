#!/bin/bash
# The stamp behind --version: workspace_status.sh prints HEAD's short hash at
# the top of a git checkout and "unknown" elsewhere (no git, or a folder
# inside another checkout); gen_build_commit.sh turns stable-status.txt into
# C++ and accepts only a hexadecimal hash.
#   version_scripts_test.sh WORKSPACE_STATUS GEN_BUILD_COMMIT
set -uo pipefail
status_script="$(realpath "$1")" gen_script="$(realpath "$2")"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/version.XXXXXX")"
failures=0
check() {  # check <description> <expected> <actual>
  if [[ "$2" == "$3" ]]; then
    echo "ok   $1"
  else
    echo "FAIL $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

mkdir -p "${work}/plain"
check "outside git" "STABLE_KILN_COMMIT unknown" \
  "$(cd "${work}/plain" && "${status_script}")"

repo="${work}/repo"
mkdir -p "${repo}/sub"
git -C "${repo}" init -q
echo x >"${repo}/file"
git -C "${repo}" add file
git -C "${repo}" -c user.name=kiln -c user.email=kiln@localhost \
  commit -q -m first
head="$(git -C "${repo}" rev-parse --short=7 HEAD)"
check "top of a checkout" "STABLE_KILN_COMMIT ${head}" \
  "$(cd "${repo}" && "${status_script}")"
check "inside another checkout" "STABLE_KILN_COMMIT unknown" \
  "$(cd "${repo}/sub" && "${status_script}")"

generated() {  # generated <stable-status lines>: the commit in the C++
  printf '%s\n' "$@" >"${work}/stable-status.txt"
  "${gen_script}" "${work}/stable-status.txt" |
    sed -n 's/.*kBuildCommit\[\] = "\(.*\)";/\1/p'
}
check "hash" "3911962" \
  "$(generated "BUILD_HOST h" "STABLE_KILN_COMMIT 3911962" "BUILD_USER u")"
check "no key" "unknown" "$(generated "BUILD_HOST h")"
check "not a hash" "unknown" "$(generated 'STABLE_KILN_COMMIT 12";evil')"
check "unknown" "unknown" "$(generated "STABLE_KILN_COMMIT unknown")"

[[ ${failures} -eq 0 ]] || { echo "${failures} failed"; exit 1; }
