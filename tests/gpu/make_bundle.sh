#!/bin/bash
# Builds the GPU test binaries and copies them, with their data, into
# .gpu-bundle/ at the repository root (git-ignored). Then, on the GPU
# machine, from the repository root: tests/gpu/run_bundle.sh <log dir>.
#
# The binaries link Abseil, gtest and the C++ runtime statically and open
# libcuda.so.1 with dlopen, so they need only glibc there.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Binaries of the bundle and the data files they read (from tests/gpu).
BINARIES=(//tests/gpu:runtime_gpu_test //tests/gpu:session_gpu_test)
DATA=(tests/gpu/kernels.ptx tests/gpu/kernels_sm90.cubin)

bazel build "${BINARIES[@]}" //tests/gpu:kernels_ptx //tests/gpu:kernels_cubin

bundle=.gpu-bundle
rm -rf "${bundle}"
mkdir -p "${bundle}"
bin_dir="$(bazel info bazel-bin 2>/dev/null)"
: >"${bundle}/BINARIES"
for target in "${BINARIES[@]}"; do
  path="${target#//}"
  path="${path/://}"
  name="$(basename "${path}")"
  cp "${bin_dir}/${path}" "${bundle}/${name}"
  chmod u+w,+x "${bundle}/${name}"
  echo "${name}" >>"${bundle}/BINARIES"
  # Anything but glibc would not be found on the GPU machine.
  if readelf -d "${bundle}/${name}" | grep NEEDED |
      grep -vE 'lib(c|m|dl|pthread|rt)\.so|ld-linux' ; then
    echo "make_bundle: ${name} needs a shared library besides glibc" >&2
    exit 1
  fi
done
for file in "${DATA[@]}"; do
  cp "${bin_dir}/${file}" "${bundle}/"
  chmod u+w "${bundle}/$(basename "${file}")"
done
git rev-parse HEAD >"${bundle}/COMMIT" 2>/dev/null || true
echo "bundle in ${bundle}:"
ls -l "${bundle}"
