#!/bin/bash
# check_layering_test.sh FILE...: the sources of compiler/ and codegen/ keep
# the layering rule (check_layering.sh), and the check catches what breaks it.
set -u
here="$(dirname "$0")"
check="${here}/check_layering.sh"

compiler=0 codegen=0
for file in "$@"; do
  case "$file" in compiler/*) compiler=$((compiler + 1)) ;; codegen/*) codegen=$((codegen + 1)) ;; esac
done
if [ "$compiler" -lt 50 ] || [ "$codegen" -lt 50 ]; then
  echo "FAIL: too few sources to check ($compiler of compiler/, $codegen of codegen/)"
  exit 1
fi
if ! "$check" "$@"; then
  echo "FAIL: the sources break the layering rule (docs/DESIGN.md)"
  exit 1
fi

# Planted breaks: each must be caught.
tmp="${TEST_TMPDIR:-$(mktemp -d)}/planted"
mkdir -p "$tmp/compiler/pipeline" "$tmp/codegen/cuda"
cd "$tmp"
printf '#include "codegen/cuda/ModuleCodegen.h"\n' >compiler/pipeline/Bad.cpp
printf '#include "compiler/training/TrainStep.h"\n' >codegen/cuda/Bad.cpp
printf '#include "compiler/pipeline/Pipeline.h"\n' >codegen/cuda/Bad.h
printf '#include "compiler/transforms/Fusion.h"\n#include "compiler/testing/KilnTestContext.h"\n' >codegen/cuda/Good_test.cc
for bad in compiler/pipeline/Bad.cpp codegen/cuda/Bad.cpp codegen/cuda/Bad.h; do
  if "$check" "$bad" >/dev/null; then
    echo "FAIL: $bad breaks the rule and passed"
    exit 1
  fi
done
if ! "$check" codegen/cuda/Good_test.cc; then
  echo "FAIL: a test's allowed includes were refused"
  exit 1
fi
echo "PASS: $compiler sources of compiler/ and $codegen of codegen/ keep the layering"
