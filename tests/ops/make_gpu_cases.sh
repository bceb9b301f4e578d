#!/bin/bash
# Builds, on this machine, the GPU check of the op-coverage models into DIR:
# for every model and mode (inference, f32 sgd, tf32 sgd, bf16 adamw, f16
# adamw) that has a GPU kernel, its artifact (kilnc), fresh random arguments
# under SEED, and the f64 reference outputs of the entry it checks (kiln-ref
# on the module kilnc compiled): `forward` for inference (the op's forward),
# `forward_backward` for the training modes (the loss and every parameter's
# gradient).
#   make_gpu_cases.sh DIR SEED KILNC KILN_REF [MODELS_DIR]
# (MODELS_DIR defaults to the op-coverage models next to this script; MODES,
# a space-separated list of modes, to inference f32_sgd bf16_adamw. A model
# whose header says `// gpu-modes: MODE...` is built in those modes only.)
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
                  [tf32_sgd]="--train=sgd --tf32"
                  [bf16_adamw]="--train=adamw --precision=bf16"
                  [f16_adamw]="--train=adamw --precision=f16")
for mode in ${MODES:-inference f32_sgd bf16_adamw}; do
  [[ -n "${flags[$mode]+set}" ]] || { echo "make_gpu_cases.sh: unknown mode '${mode}'" >&2; exit 1; }
done
for model in "${models}"/*.mlir; do
  name="$(basename "${model}" .mlir)"
  only="$(sed -n 's|^// gpu-modes: ||p' "${model}")"
  built=()
  for mode in ${MODES:-inference f32_sgd bf16_adamw}; do
    # Ops without a GPU kernel yet (the suite checks their diagnostic).
    if grep -Eq "^// expect-error(\[[a-z0-9_,]*\b${mode}\b[a-z0-9_,]*\])?: " "${model}"; then
      continue
    fi
    [[ -z "${only}" || " ${only} " == *" ${mode} "* ]] || continue
    case="${out}/${name}.${mode}"
    # (A file of an earlier build may be a link to another mode's.)
    rm -f "${case}".*
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
    "${kilnref}" "${tmp}/module.mlir" --function "${entry}" --random-seed "${seed}" \
      "${init[@]}" --precision f64 --save-inputs "${tmp}/drawn.safetensors" -o "${case}.expected.safetensors"
    (cd "${out}" && python3 split_inputs.py "${tmp}/module.mlir" "${entry}" \
      "${tmp}/drawn.safetensors" "${case}.params.safetensors" "${case}.inputs.safetensors")
    echo "${entry}" >"${case}.entry"
    # A model whose own arithmetic rounds (an explicit cast to bf16) names
    # the tolerance that fits it: `// gpu-tolerance: RTOL ATOL`.
    sed -n 's|^// gpu-tolerance: ||p' "${model}" >"${case}.tolerance"
    [[ -s "${case}.tolerance" ]] || rm "${case}.tolerance"
    # `// gpu-bf16-tolerance: RTOL ATOL`: the bf16 mode's, atol relative to
    # each output's largest magnitude (kiln-run --scaled-atol); likewise
    # `// gpu-tf32-tolerance:` for the tf32 mode and `// gpu-f16-tolerance:`
    # for the f16 mode (which takes the bf16 one when it names none).
    for kind in bf16 tf32 f16; do
      sed -n "s|^// gpu-${kind}-tolerance: ||p" "${model}" >"${case}.${kind}-tolerance"
      [[ -s "${case}.${kind}-tolerance" ]] || rm "${case}.${kind}-tolerance"
    done
    # A file identical to an earlier mode's (the f32 modes draw the same
    # arguments, f32 and tf32 sgd have the same f64 outputs) becomes a hard
    # link to it: the bundle (and its tarball) holds it once.
    for kind in params inputs expected; do
      file="${case}.${kind}.safetensors"
      [[ -f "${file}" ]] || continue
      for earlier in "${built[@]}"; do
        if cmp -s "${out}/${name}.${earlier}.${kind}.safetensors" "${file}"; then
          ln -f "${out}/${name}.${earlier}.${kind}.safetensors" "${file}"
          break
        fi
      done
    done
    built+=("${mode}")
  done
done
echo "${seed}" >"${out}/SEED"
