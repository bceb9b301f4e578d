#!/bin/bash
# Coverage-guided fuzzing of the kiln IR parser and verifier with libFuzzer.
#
#   tools/fuzz/run_ir_fuzzer.sh [SECONDS] [extra libFuzzer flags...]
#
# To replay one input after a run:
#   ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 $FUZZ_DIR/ir_fuzzer FILE
#
# Builds tests/fuzz/ir_fuzz_target.cpp together with the dialect's sources and
# the model text checks with clang-19 (-fsanitize=fuzzer,address,undefined;
# the dialect code is instrumented, the system libMLIR is not), seeds the
# corpus with the samples and lit tests, and runs for SECONDS (default 60)
# with the dictionary of the dialect's tokens that ir_fuzz_dictionary
# generates ($FUZZ_DIR/kiln_ir.dict). A crash leaves its input in
# $FUZZ_DIR/crash-* and makes the script exit non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true

FUZZ_DIR="${FUZZ_DIR:-/tmp/kiln-ir-fuzz}"
mkdir -p "${FUZZ_DIR}/corpus" "${FUZZ_DIR}/obj"

# The generated .inc files and the dictionary's generator come from the
# Bazel build.
bazel build //dialects/kiln:kiln_dialect //tests/fuzz:ir_fuzz_dictionary \
  >/dev/null 2>&1 ||
  bazel build //dialects/kiln:kiln_dialect //tests/fuzz:ir_fuzz_dictionary
GEN="$(bazel info bazel-bin 2>/dev/null)"
tests/fuzz/make_dictionary.sh "${GEN}" . "${FUZZ_DIR}/kiln_ir.dict"

CXX=clang++-19
FLAGS=(-std=c++17 -g -O1 -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize=vptr -I. -I"${GEN}" -I/usr/lib/llvm-19/include)
objects=()
for source in tests/fuzz/ir_fuzz_target.cpp dialects/kiln/IR/*.cpp \
              dialects/kiln/Utils/ShapeInference.cpp \
              compiler/import/ModelText.cpp; do
  object="${FUZZ_DIR}/obj/$(echo "${source}" | tr '/' '_').o"
  if [[ ! -f "${object}" || "${source}" -nt "${object}" ]]; then
    echo "compiling ${source}"
    "${CXX}" "${FLAGS[@]}" -c "${source}" -o "${object}"
  fi
  objects+=("${object}")
done
"${CXX}" -fsanitize=fuzzer,address,undefined "${objects[@]}" \
  -L/usr/lib/llvm-19/lib -Wl,-rpath,/usr/lib/llvm-19/lib -lMLIR -lLLVM-19 \
  -o "${FUZZ_DIR}/ir_fuzzer"

find samples tests/lit -name '*.mlir' -exec cp {} "${FUZZ_DIR}/corpus/" \;
cd "${FUZZ_DIR}"
# Leak detection is off: MLIR interns attributes for the process lifetime.
# Manual poisoning is ignored: LLVM's allocator headers, inlined into the
# instrumented dialect code, poison memory that the uninstrumented libMLIR
# then legitimately reuses, which ASan would report as use-after-poison.
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 ./ir_fuzzer -max_total_time="${seconds}" \
  -max_len=4096 -timeout=10 -print_final_stats=1 -dict=kiln_ir.dict "$@" corpus
