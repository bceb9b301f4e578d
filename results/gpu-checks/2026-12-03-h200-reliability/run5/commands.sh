#!/bin/bash
# The large GEMM models and the persistent conv + batch norm case, plainly and under each tool.
cd .gpu-bundle/large || exit 1
cp gemm_wgmma.inputs.safetensors gemm_wgmma_notma.inputs.safetensors
cp gemm_wgmma.expected.safetensors gemm_wgmma_notma.expected.safetensors
logs=/tmp/gpu-logs/large; mkdir -p $logs
one() { # TOOL
  local tool=$1 dir=$logs/$1 run
  mkdir -p $dir
  if [[ $tool == none ]]; then run="$PWD/kiln-run"; else
    printf '#!/bin/sh\nexec %s %s %s "$@"\n' "$PWD/sanitized.sh" "$tool" "$PWD/kiln-run" > $dir/kr; chmod +x $dir/kr; run=$dir/kr; fi
  for m in gemm_wgmma gemm_wgmma_notma; do
    $run $m.kiln --entry forward --inputs $m.inputs.safetensors --check $m.expected.safetensors --rtol 2e-2 --atol 2e-2 > $dir/$m.log 2>&1
    echo "$([[ $? == 0 ]] && echo PASS || echo FAIL) $m" >> $dir/summary.txt
  done
  KILN_RUN=$run KILN_JOBS=3 ops/run_gpu_cases.sh ops $dir/ops >> $dir/summary.txt 2>&1
  echo "sanitizer summaries: $(cat $dir/*.log $dir/ops/*.log 2>/dev/null | grep -c 'SUMMARY'), with errors: $(cat $dir/*.log $dir/ops/*.log 2>/dev/null | grep 'SUMMARY' | grep -vc ' 0 errors\|(0 errors')" >> $dir/summary.txt
}
for t in none memcheck racecheck synccheck initcheck; do one $t & done
wait
for t in none memcheck racecheck synccheck initcheck; do echo "== $t"; cat $logs/$t/summary.txt; done
