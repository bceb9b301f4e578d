#!/bin/bash
# Builds, on this machine, the GPU check of the op-coverage models into DIR:
# for every model and mode (inference, f32 sgd, bf16 adamw) that has a GPU
# kernel, its artifact (kilnc), fresh random arguments under SEED, and the
# f64 reference outputs of the entry it checks (kiln-ref on the module kilnc
# compiled): `forward` for inference (the op's forward), `forward_backward`
# for the training modes (the loss and every parameter's gradient).
#   make_gpu_cases.sh DIR SEED KILNC KILN_REF [MODELS_DIR]
# (MODELS_DIR defaults to the op-coverage models next to this script; MODES,
# a space-separated subset of the modes, to all three.)
# Then, on the GPU machine: DIR/run_gpu_cases.sh DIR LOGDIR.
set -euo pipefail
out="$1" seed="$2" kilnc="$3" kilnref="$4"
models="${5:-$(cd "$(dirname "$0")" && pwd)/models}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "${out}"
cp "${here}/split_inputs.py" "${here}/run_gpu_cases.sh" "${here}/../gpu/codegen/safetensors_lite.py" "${out}/"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
declare -A flags=([inference]="--inference" [f32_sgd]="--train=sgd"
                  [bf16_adamw]="--train=adamw --precision=bf16")
for model in "${models}"/*.mlir; do
  name="$(basename "${model}" .mlir)"
  for mode in ${MODES:-inference f32_sgd bf16_adamw}; do
    # Ops without a GPU kernel yet (the suite checks their diagnostic).
    if grep -Eq "^// expect-error(\[[a-z0-9_,]*\b${mode}\b[a-z0-9_,]*\])?: " "${model}"; then
      continue
    fi
    case="${out}/${name}.${mode}"
    entry=forward_backward
    [[ "${mode}" == inference ]] && entry=forward
    # shellcheck disable=SC2086
    "${kilnc}" "${model}" ${flags[$mode]} -o "${case}.kiln"
    # shellcheck disable=SC2086
    "${kilnc}" "${model}" ${flags[$mode]} --emit=mlir -o "${tmp}/module.mlir"
    # A model that needs its parameters' own scale (a long recurrence
    # whose gradients explode at unit scale) asks: `// gpu-init-params`.
    init=()
    grep -q '^// gpu-init-params' "${model}" && init=(--init-params)
    "${kilnref}" "${tmp}/module.mlir" --fn "${entry}" --random-seed "${seed}" \
      "${init[@]}" --precision f64 --save-inputs "${tmp}/drawn.safetensors" -o "${case}.expected.safetensors"
    (cd "${out}" && python3 split_inputs.py "${tmp}/module.mlir" "${entry}" \
      "${tmp}/drawn.safetensors" "${case}.params.safetensors" "${case}.inputs.safetensors")
    echo "${entry}" >"${case}.entry"
    # A model whose own arithmetic rounds (an explicit cast to bf16) names
    # the tolerance that fits it: `// gpu-tolerance: RTOL ATOL`.
    sed -n 's|^// gpu-tolerance: ||p' "${model}" >"${case}.tolerance"
    [[ -s "${case}.tolerance" ]] || rm "${case}.tolerance"
    # `// gpu-bf16-tolerance: RTOL ATOL`: the bf16 mode's, atol relative to
    # each output's largest magnitude (kiln-run --scaled-atol).
    sed -n 's|^// gpu-bf16-tolerance: ||p' "${model}" >"${case}.bf16-tolerance"
    [[ -s "${case}.bf16-tolerance" ]] || rm "${case}.bf16-tolerance"
  done
done
echo "${seed}" >"${out}/SEED"
