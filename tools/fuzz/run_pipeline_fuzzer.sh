#!/bin/bash
# Coverage-guided fuzzing of kilnc's whole pipeline with libFuzzer.
#
#   tools/fuzz/run_pipeline_fuzzer.sh [SECONDS] [extra libFuzzer flags...]
#
# To replay one input after a run:
#   ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 $FUZZ_DIR/pipeline_fuzzer FILE
# To minimise the run's corpus into a fresh folder (as tests/fuzz/pipeline_corpus/):
#   ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 $FUZZ_DIR/pipeline_fuzzer \
#     -merge=1 -max_len=16893 -timeout=30 NEW_DIR $FUZZ_DIR/corpus
#
# Builds tests/fuzz/pipeline_fuzz_target.cpp (parse and verify, then the
# pipeline for inference in f32 and for AdamW training in bf16, down to CUDA
# C++ generation) together with every project source that
# //tests/fuzz:pipeline_fuzz_target links (the dialect, its gradients,
# compiler/ and codegen/cuda/) with clang-19 (-fsanitize=fuzzer,address,
# undefined; the project's code is instrumented, the system libMLIR is not).
# Objects are cached in $FUZZ_DIR/obj (default /tmp/kiln-pipeline-fuzz) and
# rebuilt when their source or a header they include changes. The corpus
# ($FUZZ_DIR/corpus) is seeded with samples/*.mlir, tests/ops/models/*.mlir
# and tests/fuzz/pipeline_corpus/; the run lasts SECONDS (default 60). A
# crash, an ASan or UBSan report, a timeout or a pipeline failure without a
# located error leaves its input in $FUZZ_DIR/{crash,timeout,oom}-* and makes
# the script exit non-zero. Set JOBS for parallel compilation (default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"
seconds="${1:-60}"
shift || true

FUZZ_DIR="${FUZZ_DIR:-/tmp/kiln-pipeline-fuzz}"
mkdir -p "${FUZZ_DIR}/corpus" "${FUZZ_DIR}/obj" "${FUZZ_DIR}/include"

# The generated .inc files, the embedded kernel templates
# (KernelTemplates.cpp) and the dictionary's generator come from the Bazel
# build.
target=//tests/fuzz:pipeline_fuzz_target
dictionary=//tests/fuzz:ir_fuzz_dictionary
bazel build "${target}" "${dictionary}" >/dev/null 2>&1 ||
  bazel build "${target}" "${dictionary}"
GEN="$(bazel info bazel-bin 2>/dev/null)"

# The project's own sources that the target links, from Bazel's graph.
sources=()
while IFS= read -r label; do
  sources+=("$(echo "${label#//}" | sed 's/:/\//')")
done < <(bazel query "kind('source file', deps(${target}))" 2>/dev/null |
         grep -E '^//.*\.(cpp|cc)$' | grep -v -E '_test\.(cpp|cc)$' | sort)
sources+=("${GEN}/codegen/cuda/kernels/KernelTemplates.cpp")
for source in "${sources[@]}"; do
  [[ -f "${source}" ]] || { echo "missing source ${source}" >&2; exit 1; }
done

# codegen/cuda/kernels:layout is included as "kiln/<file>".
ln -sfn "${root}/codegen/cuda/kernels" "${FUZZ_DIR}/include/kiln"

CXX=clang++-19
# UBSan does not recover, so that its reports stop the run like a crash.
FLAGS=(-std=c++17 -g -O1 -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize=vptr -fno-sanitize-recover=undefined
       -Wno-unknown-pragmas -I. -I"${GEN}" -I"${FUZZ_DIR}/include"
       -I/usr/local/cuda/include -I/usr/lib/llvm-19/include)

# Whether `object` is missing or older than its source or any header that
# its dependency file lists.
stale() {
  local object="$1" source="$2" dep
  [[ -f "${object}" && -f "${object}.d" ]] || return 0
  [[ "${source}" -nt "${object}" ]] && return 0
  for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "${object}.d"); do
    [[ -e "${dep}" && "${dep}" -nt "${object}" ]] && return 0
  done
  return 1
}

objects=()
todo=()
for source in "${sources[@]}"; do
  name="${source#"${GEN}"/}"
  [[ "${name}" == "${source}" ]] || name="gen/${name}"
  object="${FUZZ_DIR}/obj/$(echo "${name}" | tr '/' '_').o"
  objects+=("${object}")
  if stale "${object}" "${source}"; then
    todo+=("${source}" "${object}")
  fi
done
if ((${#todo[@]})); then
  echo "compiling $((${#todo[@]} / 2)) of ${#sources[@]} sources"
  export CXX
  export FLAGS_STR="${FLAGS[*]}"
  printf '%s\0' "${todo[@]}" | xargs -0 -n 2 -P "${JOBS:-2}" sh -c \
    'echo "compiling $0"; ${CXX} ${FLAGS_STR} -MMD -MF "$1.d" -c "$0" -o "$1.tmp" && mv "$1.tmp" "$1"'
fi
"${CXX}" -fsanitize=fuzzer,address,undefined "${objects[@]}" \
  -L/usr/lib/llvm-19/lib -Wl,-rpath,/usr/lib/llvm-19/lib -lMLIR -lLLVM-19 \
  -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lnvrtc -lnvJitLink \
  -o "${FUZZ_DIR}/pipeline_fuzzer"

seeds=(samples/*.mlir tests/ops/models/*.mlir)
cp "${seeds[@]}" "${FUZZ_DIR}/corpus/"
if [[ -d tests/fuzz/pipeline_corpus ]]; then
  cp tests/fuzz/pipeline_corpus/* "${FUZZ_DIR}/corpus/" 2>/dev/null || true
fi
# Every seed must fit: a longer one would be cut and no longer parse.
max_len=4096
for seed in "${seeds[@]}"; do
  size=$(stat -c %s "${seed}")
  ((size > max_len)) && max_len="${size}"
done
# The dictionary of the dialect's tokens (every registered op, attribute
# name, keyword, enum case and type).
tests/fuzz/make_dictionary.sh "${GEN}" . "${FUZZ_DIR}/kiln_ir.dict"

cd "${FUZZ_DIR}"
# Leak detection is off: MLIR interns attributes for the process lifetime.
# Manual poisoning is ignored: LLVM's allocator headers, inlined into the
# instrumented project code, poison memory that the uninstrumented libMLIR
# then legitimately reuses, which ASan would report as use-after-poison.
ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 \
UBSAN_OPTIONS=print_stacktrace=1 ./pipeline_fuzzer \
  -max_total_time="${seconds}" -max_len="${max_len}" -timeout=30 \
  -dict=kiln_ir.dict -print_final_stats=1 "$@" corpus
