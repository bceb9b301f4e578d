#!/bin/bash
# Builds, on this machine, the zoo's training-step benchmark into DIR
# (default .gpu-bundle/zoo_speed, git-ignored) and DIR.tar.xz, the file to
# carry:
#   bench/make_zoo_speed_bundle.sh [DIR]      (ONLY=resnet50,gpt for some)
# bench/zoo_speed.py bundle exports each workload at its bench size and
# compiles its bf16 AdamW step with kilnc (workloads.json and MANIFEST say
# how long, how large, or kilnc's diagnostic); the bundle adds kiln-run,
# the scripts, models.py and COMMIT. The batches are drawn there. Then, on
# the GPU machine, from inside DIR:
#   python3 zoo_speed.py run OUT
# KILN_BIN=DIR takes kilnc and kiln-run from DIR instead of building them.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.gpu-bundle/zoo_speed}"
if [[ -n "${KILN_BIN:-}" ]]; then
  kilnc="${KILN_BIN}/kilnc"
  kilnrun="${KILN_BIN}/kiln-run"
else
  bazel build //tools/kilnc //tools/kiln-run >/dev/null 2>&1 ||
    bazel build //tools/kilnc //tools/kiln-run
  bin="$(bazel info bazel-bin 2>/dev/null)"
  kilnc="${bin}/tools/kilnc/kilnc"
  kilnrun="${bin}/tools/kiln-run/kiln-run"
fi
rm -rf "${out}" "${out}.tar.xz"
mkdir -p "${out}"
/usr/bin/python3 bench/zoo_speed.py bundle --kilnc "${kilnc}" --out "${out}" ${ONLY:+--only "${ONLY}"}
rm -rf "${out}/work"
cp "${kilnrun}" bench/zoo_speed.py bench/bench_harness.py tests/zoo/models.py "${out}/"
chmod u+w,+x "${out}/kiln-run"
git rev-parse HEAD >"${out}/COMMIT"
tar cJf "${out}.tar.xz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "bundle in ${out}: $(du -sh "${out}" | cut -f1), ${out}.tar.xz" \
  "$(du -sh "${out}.tar.xz" | cut -f1)"
