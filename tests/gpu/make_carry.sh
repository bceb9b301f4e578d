#!/bin/bash
# Gathers, from the bundles of tests/gpu/codegen/make_bundle.sh and
# bench/make_bundle.sh (built first), what one device call needs to check
# and time a change, into DIR (default .gpu-carry, git-ignored; the files as
# one compressed payload that DIR/go.sh unpacks), within the 64 MiB a call
# carries:
#   tests/gpu/make_carry.sh [DIR]
# MODELS: the tests/gpu/codegen models (and their _cluster, _per_item,
# _fused, _pingpong, _cooperative and _tmastore variants) to check (default: the attention models, plain (persistent),
# with a block per work item and with the one-pass backward;
# the GEMM models' references are large: gemm_tma's alone take 43 MiB);
# OPS: a regex of op-coverage cases (default: attention's);
# TRAIN: a regex of run.sh's training checks, e.g.
# '^train:sine_block_bf16:seed1$' (default: none; they take the samples'
# artifacts and train_gpu, 10 MiB);
# ARTIFACTS: a regex of the bench bundle's artifacts to take (default: the
# block without its memory-budget variants, the large GEMMs, the block's
# products, attention).
# Then, in the device call: DIR/go.sh, with BENCH=workloads (run.py's
# --only) to time them too; logs and tables land in $OUT.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-.gpu-carry}"
cg=.gpu-bundle/codegen bench=.gpu-bundle/bench
models="${MODELS:-attention attention_grad attention_items attention_pairs attention_layouts attention_per_item attention_grad_per_item attention_items_per_item attention_pairs_per_item attention_layouts_per_item attention_grad_fused attention_items_fused attention_pairs_fused attention_grad_pingpong attention_items_pingpong attention_pairs_pingpong attention_grad_cooperative attention_items_cooperative attention_pairs_cooperative}"
ops="${OPS:-^attention\.}"
train="${TRAIN:-}"
artifacts="${ARTIFACTS:-^(transformer_block_b8t1024c1024(_budget|_cluster|_per_item|_fused|_tmastore|_attncoop)?|gemm_bias_gelu_(8192|4096)x4096x4096(_cluster|_tmastore|_pingpong)?|gemm_block_.*|attention_b8h16t2048_.*)\.(kiln|stats)\$}"
for dir in "${cg}" "${bench}"; do
  [[ -d "${dir}" ]] || { echo "make_carry: build ${dir} first" >&2; exit 1; }
done
rm -rf "${out}"
mkdir -p "${out}/cg/ops" "${out}/bench"
cp "${cg}/kiln-run" "${cg}"/*.py tests/gpu/codegen/run.sh "${out}/cg/"
only=""
for model in ${models}; do
  cp "${cg}/${model}.kiln" "${out}/cg/"
  # A variant (MODEL_cluster, MODEL_per_item, MODEL_fused, MODEL_pingpong,
  # MODEL_cooperative, MODEL_tmastore) checks against its model's inputs
  # and references: a relative link when the model comes too.
  base="${model}"
  for suffix in _cluster _per_item _fused _pingpong _cooperative _tmastore; do
    base="${base%"${suffix}"}"
  done
  for file in inputs.safetensors expected.safetensors; do
    if [[ "${base}" != "${model}" && " ${models} " == *" ${base} "* ]]; then
      ln -s "${base}.${file}" "${out}/cg/${model}.${file}"
    else
      cp "${cg}/${model}.${file}" "${out}/cg/"
    fi
  done
  only+="|^ops:${model}\$"
done
if [[ -n "${train}" ]]; then
  cp "${cg}/train_gpu" "${cg}"/sine_block*.kiln "${cg}"/mlp.kiln "${out}/cg/"
fi
cp tests/ops/run_gpu_cases.sh "${cg}/ops/SEED" "${out}/cg/ops/"
for f in "${cg}"/ops/*; do
  [[ "$(basename "${f}")" =~ ${ops} ]] && cp "${f}" "${out}/cg/ops/"
done
for f in "${bench}"/*; do
  [[ "$(basename "${f}")" =~ ${artifacts} ]] && cp "${f}" "${out}/bench/"
done
cp bench/run.py bench/bench_*.py bench/profile_gemm.sh bench/profile_entry.sh bench/profile_kernels.py \
  "${out}/bench/"
git rev-parse HEAD >"${out}/bench/COMMIT"
echo "ONLY='${only#|}|^ops:${ops#^}${train:+|${train}}'" >"${out}/only"
cat >"${out}/go.sh" <<'GO'
#!/bin/bash
# On the device: the codegen checks named in ./only, then (BENCH=workloads)
# run.py's benchmarks; logs in $OUT (the codegen logs as cg_logs.tgz).
set -u
cd "$(dirname "$0")"
# The checks and artifacts travel compressed (about half the bytes).
if [[ -f payload.tgz ]]; then
  tar xzf payload.tgz && rm payload.tgz
fi
out=${OUT:-/tmp/out}
mkdir -p "${out}"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"${out}/gpu.txt" 2>&1
cp cg/kiln-run bench/
source ./only
(cd cg && ONLY="${ONLY}" timeout "${CG_TIMEOUT:-150}" ./run.sh "${out}/cg") >"${out}/codegen.txt" 2>&1
echo "== codegen"; cat "${out}/codegen.txt"
if [[ -n "${BENCH:-}" ]]; then
  (cd bench && PYTHONUNBUFFERED=1 timeout "${BENCH_TIMEOUT:-400}" python3 run.py "${out}/bench.md" \
    --only "${BENCH}" --warmup 10 --iters "${ITERS:-30}") >"${out}/bench.log" 2>&1
  echo "== bench rc $?"
fi
[[ -d "${out}/cg" ]] && tar czf "${out}/cg_logs.tgz" -C "${out}" cg && rm -rf "${out}/cg"
[[ -f "${out}/bench.md" ]] && grep -E "^\| |ok|MISMATCH|FAIL" "${out}/bench.md" | grep -v "^| variant\|^|---" | head -60
[[ -f "${out}/bench.log" ]] && grep -iE "error|Traceback|MISMATCH|FAILED" "${out}/bench.log" | head -20
exit 0
GO
chmod +x "${out}/go.sh"
tar czf "${out}/payload.tgz" -C "${out}" cg bench
rm -rf "${out}/cg" "${out}/bench"
echo "carry in ${out} ($(du -sh "${out}" | cut -f1); with the tracked files it must stay under 64 MiB)"
