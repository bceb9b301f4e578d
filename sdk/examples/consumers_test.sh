#!/bin/bash
# Installs the SDK into a fresh prefix and builds and runs, against that
# prefix only, its users in four languages: a C program (pkg-config), two
# CMake projects (find_package(kiln); one through the C API, one through the
# C++ API), a Rust program (rustc, the C API declared by hand) and a Python
# script (ctypes, libkiln.so). Each trains linear regression on the CPU
# stand-in driver; the loss must fall. The C++ API trains again from a
# dataset file it writes (kiln/dataset.h, DeviceBatchLoader), with the same
# losses. Every installed header must compile alone.
#   consumers_test.sh INSTALL_TREE SDK_FILES(6) MAKE_TEST_FILES FAKE_LIBCUDA
#                     EXAMPLES_DIR
set -uo pipefail
install_tree="$(realpath "$1")"
sdk_files=()
for file in "${@:2:6}"; do sdk_files+=("$(realpath "${file}")"); done
make_test_files="$(realpath "$8")" fake_libcuda="$(realpath "$9")"
examples="$(realpath "${10}")"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/consumers.XXXXXX")"
cd "${work}" || exit 1
prefix="${work}/prefix"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

"${install_tree}" "${prefix}" "${sdk_files[@]}" || exit 1
"${make_test_files}" "${work}" >/dev/null || exit 1
export KILN_LIBCUDA_PATH="${fake_libcuda}"
artifact="${work}/linreg.kiln"

# falls <name> <log>: the log's last "loss" is below half its first.
falls() {
  if awk '/loss/ { last = $NF; if (first == "") first = $NF }
          END { exit !(first != "" && last < first / 2) }' "$2"; then
    echo "ok   $1: $(grep -m1 loss "$2") ... $(grep loss "$2" | tail -1)"
  else
    fail "$1:"
    sed 's/^/    /' "$2"
  fi
}

# The installed header stands alone, in C and in C++.
echo '#include <kiln/kiln.h>' >header.c
cc -std=c99 -Wall -Werror -c header.c -I"${prefix}/include" -o header_c.o ||
  fail "kiln/kiln.h does not compile alone as C"
c++ -x c++ -std=c++11 -Wall -Werror -c header.c -I"${prefix}/include" \
  -o header_cc.o || fail "kiln/kiln.h does not compile alone as C++"

# Every installed header stands alone as C++, with only the installed
# include directory and Abseil's.
absl_include="$(pkg-config --variable=includedir absl_base)"
headers=0
for header in "${prefix}"/include/kiln/*.h; do
  name="kiln/$(basename "${header}")"
  echo "#include <${name}>" >alone.cc
  c++ -std=c++17 -Wall -Werror -fsyntax-only alone.cc -I"${prefix}/include" \
    -I"${absl_include}" >alone.log 2>&1 ||
    fail "${name} does not compile alone: $(head -5 alone.log)"
  headers=$((headers + 1))
done
[[ ${headers} -ge 10 ]] || fail "only ${headers} headers are installed"
echo "ok   ${headers} headers compile alone"

# libkiln.so exports the C API and nothing else.
others="$(nm -D --defined-only "${prefix}/lib/libkiln.so" |
  awk '$2 ~ /[TDBRVW]/ && $3 !~ /^kiln_/' | head -3)"
[[ -z "${others}" ]] || fail "libkiln.so exports more than kiln_*: ${others}"

# C, through pkg-config.
export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
[[ "$(pkg-config --variable=artifact_format_version kiln)" =~ ^[0-9]+$ ]] ||
  fail "kiln.pc has no artifact_format_version"
# The compiled consumers: C (pkg-config), CMake (find_package(kiln); the C
# API, and the C++ API through kiln::runtime), Rust (rustc alone, no crates).
bin="${work}/bin"
"${examples}/build_consumers.sh" "${prefix}" "${bin}" ||
  failures=$((failures + $?))
grep -q "kiln 0\.[0-9]*\.[0-9]*, artifact format [0-9]" "${bin}/build_cmake.log" ||
  fail "CMake did not report kiln's versions"
# run NAME CONSUMER [ARGS...]: trains 60 steps into NAME.log
run() {
  local name="$1" consumer="$2"
  shift 2
  "${bin}/${consumer}" "${artifact}" "$@" 60 0.05 >"${name}.log" 2>&1 ||
    fail "${name} run: $(cat "${name}.log")"
}
run C train_c && falls C C.log
run CMake train_cmake && falls CMake CMake.log
run cpp train_cpp && falls "C++ API" cpp.log
run dataset train_cpp_dataset batch.kilndata
if cmp -s cpp.log dataset.log; then
  echo "ok   C++ API from a dataset: the same losses"
else
  fail "C++ API from a dataset: $(diff cpp.log dataset.log | head -4)"
fi
run Rust train_rs && falls Rust Rust.log

# Python, with ctypes: inference, then one step with the same loss, from
# host memory and from device tensors.
if python3 "${examples}/python/train.py" "${prefix}/lib/libkiln.so" \
    "${artifact}" >python.log 2>&1; then
  echo "ok   Python: $(tr '\n' ' ' <python.log)"
else
  fail "Python:"
  sed 's/^/    /' python.log
fi

echo "${failures} failures"
[[ ${failures} -eq 0 ]]
