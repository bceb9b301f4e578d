#!/bin/bash
cd .gpu-bundle/large || exit 1
logs=/tmp/gpu-logs/tma; mkdir -p $logs
for t in none initcheck; do
  if [[ $t == none ]]; then run=(./kiln-run); else run=(./sanitized.sh $t ./kiln-run); fi
  "${run[@]}" gemm_tma.kiln --entry forward --inputs gemm_tma.inputs.safetensors --check gemm_tma.expected.safetensors --rtol 2e-2 --atol 2e-2 > $logs/gemm_tma.$t.log 2>&1
  echo "$([[ $? == 0 ]] && echo PASS || echo FAIL) gemm_tma $t" | tee -a $logs/summary.txt
done
grep -h SUMMARY $logs/*.log | tee -a $logs/summary.txt
