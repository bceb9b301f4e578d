// An attention whose output nothing uses, only its row log-sum-exp: the
// attention kernels always write the output (none computes the row
// log-sum-exp alone), so the fusion yields it too, into a buffer nothing
// reads. It used to yield the row log-sum-exp alone, which no kernel took
// ("no GPU kernel for 'kiln.attention' yet"). Found while reducing a graph
// fuzzer finding (tests/fuzz/graph).
// RUN: kilnc %s --inference --emit=mlir -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: kilnc %s --inference --no-kernel-cache --stats -o %t.kiln 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: kilnc %s --inference --precision=bf16 --no-kernel-cache --stats -o %t.bf16.kiln 2>&1 | FileCheck %s --check-prefix=STATS

// The compiled forward computes what the graph does.
// RUN: kiln-ref %t.mlir --function forward --random-seed 5 --print > %t.fused.txt
// RUN: kiln-ref %s --function loss --random-seed 5 --print > %t.graph.txt
// RUN: diff %t.fused.txt %t.graph.txt

// CHECK: %[[A:.*]]:2 = kiln.fusion "attention"
// CHECK: %[[O:.*]], %[[LSE:.*]] = kiln.attention
// CHECK: kiln.yield %[[O]], %[[LSE]] : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>
// CHECK: kiln.fusion "reduction" (%[[A]]#1)

// STATS: kernel kiln_attention_{{(wgmma_)?}}fwd_
// STATS: entry forward:
// STATS-NEXT: kiln_attention_{{(wgmma_)?}}fwd 1
func.func @loss(
    %q: tensor<1x2x4x8xf32> {kiln.name = "q"},
    %k: tensor<1x2x4x8xf32> {kiln.name = "k"},
    %v: tensor<1x2x4x8xf32> {kiln.name = "v"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %o, %lse = kiln.attention %q, %k, %v with_row_lse : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
  %loss = kiln.reduce_sum %lse dims = [0, 1, 2] : tensor<1x2x4xf32>
  return %loss : tensor<f32>
}
