#!/bin/bash
# zoo.py bundle, the part of tests/zoo/make_gpu_bundle.sh that runs here, on
# one small model (gru at its CI size): it exports the model, compiles the
# three modes and writes what the GPU machine's run.sh reads. Every mode
# must compile and every file the GPU side opens must be there.
set -euo pipefail
if ! python3 -c "import torch" 2>/dev/null; then
  echo "zoo_bundle_test: python3-torch is needed (tools/install_deps.sh)" >&2
  exit 1
fi
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
out="${TEST_TMPDIR:-$(mktemp -d)}/bundle"
python3 tests/zoo/zoo.py bundle --kilnc tools/kilnc/kilnc --out "${out}" \
  --size ci --models gru \
  --kernel-cache "${KILN_KERNEL_CACHE:-${home}/.cache/kiln/kernels}"
status=0
for mode in inference f32_sgd f32_adamw; do
  line="$(grep "^gru ${mode} " "${out}/MANIFEST" || true)"
  [[ "${line}" == "gru ${mode} pass"* ]] || { echo "FAIL: ${line:-no ${mode} line}"; status=1; }
done
for file in MODELS gru.json gru.batch.safetensors gru.infer_inputs.safetensors \
    gru.buffers.safetensors gru.expected_output.safetensors \
    gru.inference.kiln gru.f32_sgd.kiln gru.f32_adamw.kiln; do
  [[ -s "${out}/${file}" ]] || { echo "FAIL: the bundle has no ${file}"; status=1; }
done
python3 -c "import json, sys; info = json.load(open(sys.argv[1])); assert info['train'], info" \
  "${out}/gru.json" || { echo "FAIL: gru.json has no --trainable list"; status=1; }
[[ ${status} -eq 0 ]] && echo "ok   the bundle of gru: $(tr '\n' ';' <"${out}/MANIFEST")"
exit "${status}"
