#!/bin/bash
# Writes docs/ops.md, the op reference, from the dialect's ODS: the dialect's
# description, one section per op family (one .td file each: an index, then
# its ops as mlir-tblgen -gen-op-doc documents them), then the attributes and
# enums. Fails when the families miss an op of the dialect.
#   gen_ops_md.sh MLIR_TBLGEN LLVM_INCLUDE OUT      (from the workspace root)
set -euo pipefail
tblgen="$1"
include="$2"
out="$3"
ir=dialects/kiln/IR
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# The op families: each .td file and its section's title.
families=(
  "KilnElementwiseOps.td:Elementwise ops, constants and random numbers"
  "KilnShapeOps.td:Shape ops, reductions and matmul"
  "KilnNNOps.td:Neural-network ops, losses, recurrence and fusion"
  "KilnNNBackwardOps.td:Backward ops of the neural-network ops"
  "KilnSequenceBackwardOps.td:Backward ops of attention and recurrence"
  "KilnCustomOps.td:User kernels"
)

run() { "${tblgen}" "$@" -I "${include}" -I .; }
# GitHub's anchor of a heading: lower case, punctuation dropped, spaces to
# dashes.
anchor() { tr 'A-Z' 'a-z' <<<"$1" | tr -cd 'a-z0-9_ -' | tr ' ' '-'; }

run -gen-dialect-doc -dialect=kiln "${ir}/KilnOps.td" -o "${tmp}/dialect.md"
{
  echo "<!-- Generated from the ODS of ${ir}/*.td by docs/gen_ops_md.sh; do not"
  echo "     edit. After changing a .td file: bazel run //docs:update_ops_md -->"
  echo "# kiln op reference"
  echo
  # The dialect's summary and description, up to mlir-tblgen's [TOC].
  sed -n '4p' "${tmp}/dialect.md"
  echo
  sed -n '5,/^\[TOC\]$/p' "${tmp}/dialect.md" | sed '$d'
  echo "Op families:"
  echo
  for family in "${families[@]}"; do
    title="${family#*:}"
    echo "- [${title}](#$(anchor "${title}"))"
  done
  echo "- [Attributes](#attributes) and [enums](#enums)"
  echo
  for family in "${families[@]}"; do
    run -gen-op-doc "${ir}/${family%%:*}" -o "${tmp}/family.md"
    echo "## ${family#*:}"
    echo
    # The index: each op with its summary (the line two after its heading).
    grep -A2 '^### `kiln\.' "${tmp}/family.md" | grep -v '^--$' |
      while read -r heading && read -r _ && read -r summary; do
        name="${heading#*\`}"
        name="${name%%\`*}"
        summary="${summary#_}"
        echo "- [\`${name}\`](#$(anchor "${heading#\#\#\# }")): ${summary%_}"
      done
    echo
    sed 1d "${tmp}/family.md"
  done
  sed -n '/^## Attributes$/,$p' "${tmp}/dialect.md"
} >"${out}"

all="$(grep -c '^### `kiln\.' "${tmp}/dialect.md")"
documented="$(grep -c '^### `kiln\.' "${out}")"
if [[ "${all}" != "${documented}" ]]; then
  echo "gen_ops_md.sh: the dialect has ${all} ops, the op families of this" \
       "script document ${documented}: add the new .td file to them" >&2
  exit 1
fi
