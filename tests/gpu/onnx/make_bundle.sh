#!/bin/bash
# Builds, on this machine, the GPU run of ONNX's backend node tests into DIR
# (default .gpu-bundle/onnx): every test that passes on the CPU reference
# (tests/onnx/onnx_backend_runner) is exported as the kiln module the
# importer made, compiled with kilnc --inference to an artifact, and carried
# with its inputs and expected outputs (safetensors); kiln-run runs them
# there. A test kilnc refuses (no GPU kernel for one of its ops) is left out
# with its diagnostic (NAME.skipped), reported by run.sh as SKIP.
# Then, on the GPU machine: DIR/run.sh LOGDIR.
#
# KILN_JOBS compiles that many tests at once (default 2). The bundle must
# stay within 40 MiB.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.gpu-bundle/onnx}"
data="${ONNX_TEST_DATA:-/usr/share/libonnx-testdata/data/node}"
jobs="${KILN_JOBS:-2}"
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tests/onnx:onnx_backend_runner //tools/kilnc //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
exported="$(mktemp -d)"
trap 'rm -rf "${exported}"' EXIT

"${bin}/tests/onnx/onnx_backend_runner" --data "${data}" --export "${exported}" \
  >"${out}/cpu_reference.txt"
tail -n 1 "${out}/cpu_reference.txt"

compile_one() { # exported-dir out-dir kilnc name
  local name="$4"
  if "$3" --inference "$1/${name}/model.mlir" -o "$2/${name}.kiln" \
      2>"$2/${name}.kilnc.log"; then
    cp "$1/${name}/inputs.safetensors" "$2/${name}.inputs.safetensors"
    cp "$1/${name}/expected.safetensors" "$2/${name}.expected.safetensors"
    rm -f "$2/${name}.kilnc.log"
  else
    mv "$2/${name}.kilnc.log" "$2/${name}.skipped"
    rm -f "$2/${name}.kiln"
  fi
}
export -f compile_one
ls "${exported}" | xargs -P "${jobs}" -I{} bash -c \
  'compile_one "$0" "$1" "$2" "$3"' "${exported}" "${out}" "${bin}/tools/kilnc/kilnc" {}

cp "${bin}/tools/kiln-run/kiln-run" "${out}/"
chmod u+w,+x "${out}/kiln-run"
cp tests/gpu/onnx/run.sh "${out}/"
git rev-parse HEAD >"${out}/COMMIT" 2>/dev/null || true
size=$(du -sb "${out}" | cut -f1)
echo "bundle in ${out}: $(ls "${out}"/*.kiln 2>/dev/null | wc -l) artifacts," \
  "$(ls "${out}"/*.skipped 2>/dev/null | wc -l) skipped, ${size} bytes"
if ((size > 40 * 1024 * 1024)); then
  echo "make_bundle: the bundle is larger than 40 MiB" >&2
  exit 1
fi
