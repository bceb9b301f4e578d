#!/bin/bash
# Runs the model zoo (zoo.py check) inside bazel's test environment, on this
# shard's models, against the committed expectations. Arguments go to
# zoo.py check (--models, --checks, --kilnc-flag).
set -euo pipefail
if ! python3 -c "import torch, torchvision" 2>/dev/null; then
  echo "zoo_test: python3-torch and python3-torchvision are needed (tools/install_deps.sh)" >&2
  exit 1
fi
# Kernels compiled by earlier runs are reused (the cache's key is the
# kernel's source and the compiler's identity); every model is exported and
# compiled, and every check runs, on every run.
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
cache="${KILN_KERNEL_CACHE:-${home}/.cache/kiln/kernels}"
[[ -n "${TEST_SHARD_STATUS_FILE:-}" ]] && touch "${TEST_SHARD_STATUS_FILE}"
exec python3 tests/zoo/zoo.py check \
  --kilnc tools/kilnc/kilnc \
  --kiln-ref tools/kiln-ref/kiln-ref \
  --work "${TEST_TMPDIR:-$(mktemp -d)}" \
  --kernel-cache "${cache}" \
  --shard "${TEST_SHARD_INDEX:-0}/${TEST_TOTAL_SHARDS:-1}" \
  --expectations tests/zoo/expectations.txt \
  ${XML_OUTPUT_FILE:+--junit "${XML_OUTPUT_FILE}"} "$@"
