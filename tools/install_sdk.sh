#!/bin/bash
# Builds the kiln SDK and installs it under PREFIX (docs/sdk.md):
#   PREFIX/include/kiln/kiln.h            the C API (self-contained)
#   PREFIX/include/kiln/*.h               the C++ API (needs Abseil's headers)
#   PREFIX/lib/libkiln_runtime.a          both APIs, Abseil's code folded in
#   PREFIX/lib/libkiln.so                 the C API as a shared library
#   PREFIX/lib/cmake/kiln/kilnConfig.cmake, kilnConfigVersion.cmake
#   PREFIX/lib/pkgconfig/kiln.pc
# Extra arguments go to bazel build (e.g. --local_cpu_resources=1).
set -euo pipefail
if [[ $# -lt 1 ]]; then
  echo "usage: tools/install_sdk.sh PREFIX [BAZEL_BUILD_FLAGS...]" >&2
  exit 2
fi
prefix="$1"
shift
cd "$(dirname "$0")/.."
bazel build "$@" //sdk:files
bin="$(bazel info "$@" bazel-bin)"
sdk/install_tree.sh "${prefix}" runtime/include/kiln/kiln.h \
  "${bin}/sdk/libkiln_runtime.a" "${bin}/sdk/libkiln.so" \
  "${bin}/sdk/kilnConfig.cmake" "${bin}/sdk/kilnConfigVersion.cmake" \
  "${bin}/sdk/kiln.pc"
echo "installed kiln $(sed -n 's/^Version: //p' "${prefix}/lib/pkgconfig/kiln.pc") into ${prefix}"
