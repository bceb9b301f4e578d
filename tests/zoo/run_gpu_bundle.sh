#!/bin/bash
# The model zoo on the GPU machine, inside the bundle of make_gpu_bundle.sh:
#   run.sh LOGDIR
# Per model (MODELS), with its PyTorch (torch and torchvision) on the GPU:
#  - reference: zoo.py gpu-reference makes the weights again under the
#    export's seed and computes PyTorch's f64 loss and gradients, its f32
#    ones (the GPU in PyTorch's default layout and channels-last for image
#    models, and the CPU) and its f64 and f32 losses over 30 SGD and 30
#    AdamW steps (TF32 off);
#  - inference: the forward entry's output within 1e-4 of PyTorch's,
#    relative to its largest magnitude;
#  - loss and gradients: the first call of the f32 SGD artifact's training
#    step (forward_backward) against PyTorch's f64: the loss within 1e-5
#    relative, every gradient within 1e-4 of its largest magnitude, or
#    either within 4 times the largest error of PyTorch's own f32 runs there
#    (zoo.py compare-gradients);
#  - sgd and adamw: 30 steps from the same weights on the fixed batch
#    (lr 0.01 and 1e-3) against PyTorch's f64 steps, every step's loss
#    within 1e-3 relative or 4 times the largest distance PyTorch's f32 runs
#    have reached from f64 by that step (a memorised batch through batch
#    norm amplifies rounding from step to step; a wrong gradient shows at
#    the first steps, before any drift: zoo.py compare-steps).
# A mode kilnc could not compile here is SKIP with its diagnostic (MANIFEST).
# Prints PASS/FAIL/SKIP lines and a summary; exits 1 if anything failed.
set -uo pipefail
cd "$(dirname "$0")"
logs="${1:?usage: run.sh LOGDIR}"
mkdir -p "${logs}"
logs="$(cd "${logs}" && pwd)"
passed=0 failed=0 skipped=0
record() { # NAME CHECK STATUS LOG
  if [[ $3 -eq 0 ]]; then
    passed=$((passed + 1)); echo "PASS $1 $2"
  else
    failed=$((failed + 1)); echo "FAIL $1 $2: $(tail -n 1 "$4")"
  fi
}
skip() { # NAME CHECK MODE: MODE's artifact did not compile here
  skipped=$((skipped + 1))
  echo "SKIP $1 $2: $(grep -m1 "^$1 $3 " MANIFEST | cut -d' ' -f3-)"
}
for name in $(cat MODELS); do
  log="${logs}/${name}"
  python3 zoo.py gpu-reference . "${name}" >"${log}.reference.log" 2>&1
  status=$?
  record "${name}" reference "${status}" "${log}.reference.log"
  ((status == 0)) || continue
  if [[ -f "${name}.inference.kiln" ]]; then
    ./kiln-run "${name}.inference.kiln" --inputs "${name}.infer_inputs.safetensors" \
      --check "${name}.expected_output.safetensors" --rtol 0 --atol 1e-4 --scaled-atol \
      >"${log}.inference.log" 2>&1
    record "${name}" inference $? "${log}.inference.log"
  else
    skip "${name}" inference inference
  fi
  if [[ -f "${name}.f32_sgd.kiln" ]]; then
    ./kiln-run "${name}.f32_sgd.kiln" --entry forward_backward \
      --inputs "${name}.run_inputs.safetensors" --output "${name}.kiln_gradients.safetensors" \
      >"${log}.forward_backward.log" 2>&1
    status=$?
    for what in loss gradients; do
      cp "${log}.forward_backward.log" "${log}.${what}.log"
      ((status == 0)) &&
        python3 zoo.py compare-gradients "${name}.expected_gradients.safetensors" \
          "${name}.torch_f32_gradients.safetensors" "${name}.kiln_gradients.safetensors" \
          --what "${what}" >>"${log}.${what}.log" 2>&1
      record "${name}" "${what}" $? "${log}.${what}.log"
    done
  else
    skip "${name}" forward_backward f32_sgd
  fi
  for optimizer in sgd adamw; do
    if [[ ! -f "${name}.f32_${optimizer}.kiln" ]]; then
      skip "${name}" "${optimizer}_30_steps" "f32_${optimizer}"
      continue
    fi
    lr=0.01
    [[ "${optimizer}" == adamw ]] && lr=1e-3
    ./kiln-run "${name}.f32_${optimizer}.kiln" --steps 30 --lr "${lr}" --log-every 1 \
      --inputs "${name}.run_inputs.safetensors" >"${log}.${optimizer}.log" 2>&1 &&
      python3 zoo.py compare-steps "${name}.torch_${optimizer}_losses.txt" \
        "${log}.${optimizer}.log" >"${log}.${optimizer}.compare.log" 2>&1
    status=$?
    [[ -s "${log}.${optimizer}.compare.log" ]] || cp "${log}.${optimizer}.log" "${log}.${optimizer}.compare.log"
    record "${name}" "${optimizer}_30_steps" "${status}" "${log}.${optimizer}.compare.log"
  done
done
echo "zoo on the GPU: ${passed} passed, ${failed} failed, ${skipped} skipped"
((failed == 0))
