#!/bin/bash
# On the GPU machine, inside the sweep bundle: times every artifact's three
# entries (kiln-run --bench medians) on random bf16 inputs; ENTRIES="forward"
# times only those.
cd "$(dirname "$0")"
declare -A geometry=([s64]="32 64 56 56 64 3 1 1" [s256]="32 256 14 14 256 3 1 1"
                     [s512]="32 512 7 7 512 3 1 1" [p1x1]="32 64 56 56 256 1 1 0"
                     [s2]="32 128 56 56 128 3 2 1")
for shape in "${!geometry[@]}"; do
  # shellcheck disable=SC2086
  python3 inputs.py "${shape}" ${geometry[$shape]}
done
for artifact in *.kiln; do
  shape="${artifact%%.*}"
  for entry in ${ENTRIES:-forward di dw}; do
    echo "${artifact} ${entry} $(./kiln-run "${artifact}" --entry "${entry}" \
      --inputs "${shape}.${entry}.safetensors" --bench --warmup 20 --iters 200 2>&1 |
      grep -oE 'median [0-9.]+ ms')"
  done
done
