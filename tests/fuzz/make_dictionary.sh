#!/bin/bash
# make_dictionary.sh GENERATED SOURCES OUT: writes the IR fuzzers' dictionary
# to OUT with ir_fuzz_dictionary, which it and the dialect's generated .inc
# files are taken from the tree GENERATED (bazel-bin, or a test's runfiles),
# the dialect's parser sources from the tree SOURCES (the checkout, or the
# same runfiles).
set -euo pipefail
generated="$1/dialects/kiln/IR"
sources="$2/dialects/kiln/IR"
"$1/tests/fuzz/ir_fuzz_dictionary" "${generated}/KilnOps.cpp.inc" \
  "${generated}/KilnEnums.cpp.inc" "${generated}/KilnAttrs.h.inc" \
  "${sources}/KilnAttrs.cpp" > "$3"
