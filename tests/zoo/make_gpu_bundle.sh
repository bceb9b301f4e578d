#!/bin/bash
# Builds, on this machine (Debian's python3 with python3-torch), the GPU
# check of the model zoo into DIR (default .gpu-bundle/zoo) and DIR.tar.xz,
# the file to carry:
#   tests/zoo/make_gpu_bundle.sh [DIR]        (MODELS=a,b for some; SIZE=ci|full)
# Each model of tests/zoo/models.py is exported at its full size (SIZE=full:
# ResNets, MobileNetV2, EfficientNet-B0 and ConvNeXt-Tiny at 224x224, ViT-S/16,
# the language models at T 128, the UNet at 64x64) and compiled with kilnc
# for inference (where its weights are within 16 MiB: the artifact carries
# them, and they compress little), f32 SGD and f32 AdamW (--fresh-params:
# the weights come with the inputs); the
# bundle holds the artifacts, the batch, PyTorch's f64 inference output and
# the module's buffers. The weights are made again there from the same seed
# (zoo.py gpu-reference), which also computes PyTorch's loss, gradients and
# 30-step losses there. Then, on the GPU machine:
#   tar xJf DIR.tar.xz -C "$(dirname DIR)" && DIR/run.sh LOGDIR
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.gpu-bundle/zoo}"
rm -rf "${out}" "${out}.tar.xz"
mkdir -p "${out}"
bazel build //tools/kilnc //tools/kiln-run >/dev/null
bin="$(bazel info bazel-bin 2>/dev/null)"
/usr/bin/python3 tests/zoo/zoo.py bundle --kilnc "${bin}/tools/kilnc/kilnc" --out "${out}" \
  --size "${SIZE:-full}" ${MODELS:+--models "${MODELS}"}
rm -rf "${out}/work"
cp "${bin}/tools/kiln-run/kiln-run" tests/zoo/zoo.py tests/zoo/models.py "${out}/"
cp tests/zoo/run_gpu_bundle.sh "${out}/run.sh"
chmod u+w,+x "${out}/kiln-run" "${out}/run.sh"
git rev-parse HEAD >"${out}/COMMIT" 2>/dev/null || true
tar cJf "${out}.tar.xz" -C "$(dirname "${out}")" "$(basename "${out}")"
echo "bundle in ${out}: $(du -sh "${out}" | cut -f1), ${out}.tar.xz" \
  "$(du -sh "${out}.tar.xz" | cut -f1) (carry at most 64 MiB)"
