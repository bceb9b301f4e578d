#!/bin/bash
# Builds, on this machine, the GPU run of the SDK's consumers into DIR
# (default .gpu-bundle/sdk, git-ignored) and DIR.tar.xz:
#  - prefix/: the SDK as tools/install_sdk.sh installs it;
#  - mlp.kiln: samples/mlp.mlir compiled by kilnc (its default AdamW);
#  - train_c, train_cmake, train_cpp, train_cpp_dataset, train_rs: the C
#    (pkg-config), CMake (find_package(kiln), the C API and the C++ API, the
#    latter also from a dataset file it writes) and Rust consumers of
#    sdk/examples, built against prefix/ only, and train.py, the Python (ctypes) one;
#  - batch.safetensors: the fixed batch every consumer draws (x and y of the
#    sample, filled by mlp_batch.py with the consumers' pattern), so that
#    kiln-run trains on the same data;
#  - kiln-run (static; the driver is loaded at run time), mlp_batch.py,
#    run.sh and COMMIT.
# Then, on the GPU machine: DIR/run.sh LOGDIR (each consumer trains STEPS
# steps and must print kiln-run's loss at every step).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="$(realpath -m "${1:-.gpu-bundle/sdk}")"
examples=sdk/examples
rm -rf "${out}"
mkdir -p "${out}"
tools/install_sdk.sh "${out}/prefix" >/dev/null
bazel build //tools/kilnc //tools/kiln-run >/dev/null 2>&1 ||
  bazel build //tools/kilnc //tools/kiln-run
bin="$(bazel info bazel-bin 2>/dev/null)"
"${bin}/tools/kilnc/kilnc" samples/mlp.mlir -o "${out}/mlp.kiln"
install -m 755 "${bin}/tools/kiln-run/kiln-run" "${out}/kiln-run"

prefix="${out}/prefix"
"${examples}/build_consumers.sh" "${prefix}" "${out}"
rm -f "${out}"/build_*.log
# libkiln.so links the system's shared Abseil (Debian's static one is not
# position independent), which the GPU machine lacks: the bundle brings it.
mkdir -p "${out}/absl"
ldd "${prefix}/lib/libkiln.so" | awk '/libabsl_/ { print $3 }' |
  xargs -I{} cp -L {} "${out}/absl/"
cp "${examples}/python/train.py" "${examples}/gpu/mlp_batch.py" \
  "${examples}/gpu/run.sh" "${out}/"
python3 "${examples}/gpu/mlp_batch.py" write "${out}/batch.safetensors"
git rev-parse HEAD >"${out}/COMMIT"
tar -cJf "${out}.tar.xz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "bundle: ${out}.tar.xz ($(du -h "${out}.tar.xz" | cut -f1))"
