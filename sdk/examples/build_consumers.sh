#!/bin/bash
# Builds the SDK's compiled consumers against an installed tree only:
#   build_consumers.sh PREFIX OUT
# into OUT: train_c (C, pkg-config), train_cmake (CMake, find_package, the C
# API), train_cpp and train_cpp_dataset (CMake, the C++ API; the latter from
# a dataset file), train_rs (Rust, rustc alone, the C API declared by hand),
# each build's output in OUT/build_NAME.log. Prints "FAIL NAME build" with
# the log's tail for each that fails; exits with the number that failed.
set -uo pipefail
examples="$(cd "$(dirname "$0")" && pwd)"
prefix="$(realpath "$1")" out="$(realpath -m "$2")"
mkdir -p "${out}"
failures=0
built() {  # built NAME: reports a failed build
  [[ $? -eq 0 ]] && return
  echo "FAIL $1 build: $(tail -5 "${out}/build_$1.log")"
  failures=$((failures + 1))
}
# pkg-config's own error (no kiln.pc) goes to the build log with cc's.
flags="$(PKG_CONFIG_PATH="${prefix}/lib/pkgconfig" pkg-config --cflags --libs kiln \
  2>"${out}/build_c.log")" &&
  cc -std=c11 -O2 -Wall -o "${out}/train_c" "${examples}/c/train.c" ${flags} \
    >>"${out}/build_c.log" 2>&1
built c
cmake_build() {  # cmake_build NAME SOURCE TARGET...: a CMake project's targets
  local name="$1" source="$2" build
  build="$(mktemp -d)"
  shift 2
  cmake -S "${examples}/${source}" -B "${build}" -DCMAKE_PREFIX_PATH="${prefix}" \
    -DCMAKE_BUILD_TYPE=Release >"${out}/build_${name}.log" 2>&1 &&
    cmake --build "${build}" >>"${out}/build_${name}.log" 2>&1 &&
    for target in "$@"; do
      install -m 755 "${build}/${target%%:*}" "${out}/${target#*:}" || return 1
    done
  local status=$?
  rm -rf "${build}"
  return "${status}"
}
cmake_build cmake cmake train:train_cmake
built cmake
cmake_build cpp cpp train:train_cpp train_dataset:train_cpp_dataset
built cpp
rustc -O -o "${out}/train_rs" "${examples}/rust/train.rs" -L "${prefix}/lib" \
  -l static=kiln_runtime -l stdc++ >"${out}/build_rs.log" 2>&1
built rs
exit "${failures}"
