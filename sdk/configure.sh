#!/bin/bash
# configure.sh KILN_H ARTIFACT_H TEMPLATE OUT: fills in the version of the C
# API (KILN_VERSION_* of kiln/kiln.h) and the artifact format versions this
# runtime reads (runtime/artifact/artifact.h).
set -euo pipefail
macro() { sed -n "s/^#define $1 \([0-9]*\)$/\1/p" "$2"; }
constant() {
  sed -n "s/^inline constexpr uint32_t $1 = \([0-9]*\);$/\1/p" "$2"
}
major="$(macro KILN_VERSION_MAJOR "$1")"
minor="$(macro KILN_VERSION_MINOR "$1")"
patch="$(macro KILN_VERSION_PATCH "$1")"
format="$(constant kFormatVersion "$2")"
oldest="$(constant kOldestFormatVersion "$2")"
for value in "${major}" "${minor}" "${patch}" "${format}" "${oldest}"; do
  [[ -n "${value}" ]] || { echo "configure.sh: a version is missing" >&2; exit 1; }
done
sed -e "s/@KILN_VERSION@/${major}.${minor}.${patch}/g" \
  -e "s/@KILN_MAJOR@/${major}/g" -e "s/@KILN_MINOR@/${minor}/g" \
  -e "s/@KILN_FORMAT@/${format}/g" -e "s/@KILN_OLDEST_FORMAT@/${oldest}/g" \
  "$3" >"$4"
