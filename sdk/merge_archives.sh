#!/bin/bash
# merge_archives.sh OUT ARCHIVE... --system NAME...: writes the static archive
# OUT holding every member of the ARCHIVEs and of the system archives NAMEd
# (found where the compiler finds libraries), with ar's MRI script, which
# keeps members of the same name apart.
set -euo pipefail
out="$1"
shift
script="CREATE ${out}"$'\n'
system=0
for arg in "$@"; do
  if [[ "${arg}" == "--system" ]]; then system=1; continue; fi
  path="${arg}"
  if ((system)); then
    path="$(gcc -print-file-name="${arg}")"
    if [[ "${path}" != /* ]]; then
      echo "merge_archives: no system archive ${arg}" >&2
      exit 1
    fi
  fi
  script+="ADDLIB ${path}"$'\n'
done
script+=$'SAVE\nEND\n'
ar -M <<<"${script}"
ranlib "${out}"
