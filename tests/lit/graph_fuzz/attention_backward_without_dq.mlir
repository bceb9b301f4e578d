// In bf16 on sm_90 an attention whose query needs no gradient (an input, not
// a parameter's function) has a backward without dQ. Its warp-specialised
// dQ kernel then computes the rows' statistics alone, which the dK/dV
// kernel reads; it used to instantiate the dQ sweep all the same, which
// stores through C::d_query_layout, a layout such a configuration does not
// have ("generated kernel 'kiln_attention_wgmma_bwd_dq_...' does not
// compile"). Found by the graph fuzzer's GPU bundle (tests/fuzz/graph).
// RUN: kilnc %s --train=adamw --precision=bf16 --no-kernel-cache --stats -o %t.kiln 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.cu
// RUN: FileCheck %s < %t.cu

// The compiled gradients are those of the unfused step.
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=mlir -o %t.mlir
// RUN: kiln-opt %s --kiln-mixed-precision="function=loss precision=bf16" --kiln-make-train-step="function=loss optimizer=adamw" -o %t.unfused.mlir
// RUN: kiln-ref %t.mlir --function forward_backward --init-params --random-seed 3 --print --print-count 168 > %t.fused.txt
// RUN: kiln-ref %t.unfused.mlir --function forward_backward --init-params --random-seed 3 --print --print-count 168 > %t.unfused.txt
// RUN: diff %t.fused.txt %t.unfused.txt
// RUN: FileCheck %s --check-prefix=REF < %t.fused.txt

// STATS: kernel kiln_attention_wgmma_bwd_dq_{{[0-9a-f]+}} (sm_90a): attention_wgmma_bwd_dq
// STATS: kernel kiln_attention_wgmma_bwd_dkdv_{{[0-9a-f]+}} (sm_90a): attention_wgmma_bwd_dkdv

// CHECK-LABEL: ===== kiln_attention_wgmma_bwd_dq_
// CHECK: static constexpr bool has_dq = false, has_dk = false, has_dv = false;
// CHECK-NOT: d_query_layout
// CHECK: backward_dq_wgmma<config>({{.*}}, row_lse, row_delta, nullptr);
// CHECK-LABEL: ===== kiln_attention_wgmma_bwd_dkdv_
// CHECK: static constexpr bool has_dq = false, has_dk = true, has_dv = true;

// REF: loss: tensor<f32>
// REF: grad.k: tensor<1x3x7x8xbf16>
// REF: grad.v: tensor<1x3x7x8xbf16>
func.func @loss(
    %q: tensor<1x3x8x8xf32> {kiln.name = "q"},
    %k: tensor<1x3x7x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "k"},
    %v: tensor<1x3x7x8xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "v"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %o = kiln.attention %q, %k, %v : tensor<1x3x8x8xf32>, tensor<1x3x7x8xf32>, tensor<1x3x7x8xf32>
  %loss = kiln.reduce_mean %o dims = [0, 1, 2, 3] : tensor<1x3x8x8xf32>
  return %loss : tensor<f32>
}
