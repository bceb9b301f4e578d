#!/bin/bash
# Builds the GPU test binaries and kiln-run and copies them, with their data,
# into .gpu-bundle/ at the repository root (git-ignored), or into the folder
# given as $1. Then, on the GPU machine: <bundle>/run_bundle.sh <log dir>
# (or tests/gpu/run_bundle.sh <log dir> from the repository root).
#
# The binaries link Abseil, gtest and the C++ runtime statically and open
# libcuda.so.1 with dlopen, so they need only glibc there.
set -euo pipefail
cd "$(dirname "$0")/../.."

# gtest binaries of the bundle.
TESTS=(//tests/gpu:runtime_gpu_test //tests/gpu:session_gpu_test)
# Other binaries: kiln-run, the maker of its test files and the event file
# reader.
TOOLS=(//tools/kiln-run //tests/gpu:make_test_files //runtime/observe:dump_events)
# Data files the tests read (from bazel-bin/tests/gpu).
DATA=(tests/gpu/kernels.ptx tests/gpu/kernels_sm90.cubin)
# Script tests: "<script> <args...>", run from the bundle folder.
SCRIPTS=("kiln_run_test.sh ./kiln-run ./make_test_files ./dump_events")

bazel build "${TESTS[@]}" "${TOOLS[@]}" //tests/gpu:kernels_ptx //tests/gpu:kernels_cubin

bundle="${1:-.gpu-bundle}"
mkdir -p "${bundle}"
# Only this bundle's own files are replaced: the other bundles live in
# folders beside them (.gpu-bundle/codegen, ...).
rm -f "${bundle}/BINARIES" "${bundle}/SCRIPTS" "${bundle}/COMMIT" "${bundle}/run_bundle.sh"
for target in "${TESTS[@]}" "${TOOLS[@]}"; do rm -f "${bundle}/$(basename "${target##*[:/]}")"; done
for file in "${DATA[@]}"; do rm -f "${bundle}/$(basename "${file}")"; done
for entry in "${SCRIPTS[@]}"; do rm -f "${bundle}/${entry%% *}"; done
bin_dir="$(bazel info bazel-bin 2>/dev/null)"
: >"${bundle}/BINARIES"
: >"${bundle}/SCRIPTS"
for target in "${TESTS[@]}" "${TOOLS[@]}"; do
  path="${target#//}"
  if [[ "${path}" == *:* ]]; then
    path="${path/://}"
  else
    path="${path}/$(basename "${path}")"
  fi
  name="$(basename "${path}")"
  cp "${bin_dir}/${path}" "${bundle}/${name}"
  chmod u+w,+x "${bundle}/${name}"
  # Anything but glibc would not be found on the GPU machine.
  if readelf -d "${bundle}/${name}" | grep NEEDED |
      grep -vE 'lib(c|m|dl|pthread|rt)\.so|ld-linux' ; then
    echo "make_bundle: ${name} needs a shared library besides glibc" >&2
    exit 1
  fi
done
for target in "${TESTS[@]}"; do
  basename "${target#*:}" >>"${bundle}/BINARIES"
done
for file in "${DATA[@]}"; do
  cp "${bin_dir}/${file}" "${bundle}/"
  chmod u+w "${bundle}/$(basename "${file}")"
done
for entry in "${SCRIPTS[@]}"; do
  script="${entry%% *}"
  cp "tests/gpu/${script}" "${bundle}/"
  echo "${entry}" >>"${bundle}/SCRIPTS"
done
cp tests/gpu/run_bundle.sh tests/gpu/sanitized.sh tests/gpu/check_tensorboard.py "${bundle}/"
git rev-parse HEAD >"${bundle}/COMMIT" 2>/dev/null || true
echo "bundle in ${bundle}:"
ls -l "${bundle}"
