#!/bin/bash
# Builds the GPU check of the attention kernels into DIR (default
# .gpu-bundle/attention): the models of gen_models.py (forward, and the loss
# with the q, k and v gradients, over head dims 32 to 256, causal and not,
# Tq != Tk, partial tiles) in bf16 adamw, f16 adamw, f32 sgd and inference,
# each against kiln-ref's f64 outputs on fresh random arguments
# (tests/ops/make_gpu_cases.sh), kiln-run, and DIR.tar.gz of it all.
# On the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
#   SEED=N tests/gpu/attention/make_bundle.sh [DIR]
# KILN_BIN=FOLDER takes kilnc, kiln-ref and kiln-run from FOLDER instead of
# building them with bazel.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$(cd "${here}/../../.." && pwd)/.gpu-bundle/attention}"
MODES="inference f32_sgd bf16_adamw f16_adamw" exec "${here}/../../ops/make_model_bundle.sh" \
  "${here}/gen_models.py" "${out}"
