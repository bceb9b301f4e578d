#!/bin/bash
# The ONNX sample, kiln side, built here from what export_mlp.py wrote on the
# GPU machine (EXPORTDIR: mlp.onnx, batch.safetensors, torch_losses.txt,
# torch_initial.safetensors):
#   samples/onnx/make_bundle.sh EXPORTDIR [DIR]     (default .gpu-bundle/onnx-sample)
# compiles mlp.onnx for training with kilnc (every initializer trainable,
# cross entropy against the new input "labels", plain SGD), writes the
# ONNX weights as a step-0 checkpoint (--onnx-weights) and checks them
# against PyTorch's initial weights. Then, on the GPU machine:
#   DIR/run.sh LOGDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
export_dir="${1:?usage: make_bundle.sh EXPORTDIR [DIR]}"
out="${2:-.gpu-bundle/onnx-sample}"
rm -rf "${out}"
mkdir -p "${out}"
bazel build //tools/kilnc //tools/kiln-ref //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
flags=(--trainable=all --loss=cross_entropy --target=labels)
"${bin}/tools/kilnc/kilnc" "${export_dir}/mlp.onnx" "${flags[@]}" --train=sgd \
  --onnx-weights="${out}/initial.safetensors" -o "${out}/mlp.kiln"
python3 - "${out}/initial.safetensors" "${export_dir}/torch_initial.safetensors" <<'PY'
import sys
sys.path.insert(0, "tests/gpu/codegen")
import safetensors_lite
ours, _ = safetensors_lite.load(sys.argv[1])
torch, _ = safetensors_lite.load(sys.argv[2])
assert ours.keys() == torch.keys(), (sorted(ours), sorted(torch))
for name in ours:
    assert ours[name] == torch[name], f"{name} differs from PyTorch's"
print(f"make_bundle: the ONNX weights equal PyTorch's ({len(ours)} tensors)")
PY
# The first loss on the CPU reference, next to the GPU's in run.sh's log.
python3 - "${out}/reference_inputs.safetensors" "${out}/initial.safetensors" \
  "${export_dir}/batch.safetensors" <<'PY'
import sys
sys.path.insert(0, "tests/gpu/codegen")
import safetensors_lite
merged = {}
for path in sys.argv[2:]:
    merged.update(safetensors_lite.load(path)[0])
safetensors_lite.save(sys.argv[1], merged)
PY
"${bin}/tools/kiln-ref/kiln-ref" "${export_dir}/mlp.onnx" "${flags[@]}" --function loss \
  --inputs "${out}/reference_inputs.safetensors" --print >"${out}/kiln_ref_loss.txt"
rm "${out}/reference_inputs.safetensors"
cp "${export_dir}/batch.safetensors" "${export_dir}/torch_losses.txt" "${out}/"
cp "${bin}/tools/kiln-run/kiln-run" samples/onnx/run.sh samples/onnx/compare_losses.py "${out}/"
chmod u+w,+x "${out}/kiln-run" "${out}/run.sh"
cat "${out}/kiln_ref_loss.txt"
echo "bundle in ${out}:"; ls -l "${out}"
