#!/bin/bash
# Builds the GPU check of the convolution kernels into DIR (default
# .gpu-bundle/conv): the models of gen_models.py (conv2d forward, input and
# filter gradients over kernel sizes, strides, padding, dilation, groups and
# both layouts; fused epilogues) in five modes: inference, f32 sgd, tf32 sgd,
# bf16 adamw and f16 adamw (the forward, or the loss and every gradient of
# forward_backward), each against kiln-ref's f64 outputs on fresh random
# arguments (tests/ops/make_gpu_cases.sh), kiln-run, and DIR.tar.gz of it all.
# On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   SEED=N tests/gpu/conv/make_bundle.sh [DIR]
# KILN_BIN=FOLDER takes kilnc, kiln-ref and kiln-run from FOLDER instead of
# building them with bazel. The bundle (an artifact per model and mode) is
# best carried as the tarball.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$(cd "${here}/../../.." && pwd)/.gpu-bundle/conv}"
MODES="inference f32_sgd tf32_sgd bf16_adamw f16_adamw" exec "${here}/../../ops/make_model_bundle.sh" \
  "${here}/gen_models.py" "${out}"
