#!/bin/bash
# install_tree.sh PREFIX KILN_H LIBKILN_RUNTIME_A LIBKILN_SO KILN_CONFIG
#                 KILN_CONFIG_VERSION KILN_PC
# Lays out the SDK under PREFIX from the files //sdk:files builds:
#   include/kiln/*.h (kiln.h and the C++ headers beside it),
#   lib/libkiln_runtime.a, lib/libkiln.so,
#   lib/cmake/kiln/kilnConfig{,Version}.cmake, lib/pkgconfig/kiln.pc
set -euo pipefail
if [[ $# -ne 7 ]]; then
  echo "usage: install_tree.sh PREFIX KILN_H LIB_A LIB_SO CONFIG VERSION PC" >&2
  exit 2
fi
prefix="$1"
mkdir -p "${prefix}/include/kiln" "${prefix}/lib/cmake/kiln" \
  "${prefix}/lib/pkgconfig"
install -m 644 "$(dirname "$2")"/*.h "${prefix}/include/kiln/"
install -m 644 "$3" "${prefix}/lib/libkiln_runtime.a"
install -m 755 "$4" "${prefix}/lib/libkiln.so"
install -m 644 "$5" "${prefix}/lib/cmake/kiln/kilnConfig.cmake"
install -m 644 "$6" "${prefix}/lib/cmake/kiln/kilnConfigVersion.cmake"
install -m 644 "$7" "${prefix}/lib/pkgconfig/kiln.pc"
