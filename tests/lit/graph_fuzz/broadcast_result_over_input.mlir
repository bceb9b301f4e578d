// In bf16 AdamW training, the gradient's seed (a bf16 scalar) feeds one
// pointwise kernel twice: through a reshape, broadcast to a 10x1 result,
// and directly, into a dropout of its own shape. The memory planner wrote
// the dropout over the seed, since that operand was read element for
// element; but the kernel also read those bytes through the reshape, at
// every element of the larger result, after one thread had written them.
// Pointwise codegen refused it ("result #1 has fewer elements than its
// kernel's root and is written over an input the kernel reads"); a result
// now reuses an operand's bytes only when no other operand views them.
// Found by the graph fuzzer (tests/fuzz/graph, graph 20261207:76, reduced).
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.cu
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.sgd.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=mlir -o %t.mlir
// RUN: FileCheck %s < %t.mlir

// The compiled step computes what the unfused one does (the fused product
// of a negative gradient and a zero is a -0 where the unfused one is 0).
// RUN: kiln-opt %s --kiln-mixed-precision="function=loss precision=bf16" --kiln-make-train-step="function=loss optimizer=adamw" -o %t.unfused.mlir
// RUN: kiln-ref %t.mlir --function forward_backward --init-params --random-seed 3 --print --print-count 20 | sed -E 's/-0([],])/0\1/g' > %t.fused.txt
// RUN: kiln-ref %t.unfused.mlir --function forward_backward --init-params --random-seed 3 --print --print-count 20 | sed -E 's/-0([],])/0\1/g' > %t.unfused.txt
// RUN: diff %t.fused.txt %t.unfused.txt

// CHECK-LABEL: func.func @train_step
// CHECK: %[[SEED:.*]] = kiln.fusion "pointwise" () {kiln.buffers = [{buffer = "arena", offset = [[SEED_AT:[0-9]+]] : i64, size = 2 : i64}]}
// CHECK: %[[VIEW:.*]] = kiln.reshape %[[SEED]]
// CHECK-NOT: kiln.fusion "pointwise" (%[[VIEW]], %[[SEED]]) {{.*}}{buffer = "arena", offset = [[SEED_AT]] : i64, size = 2 : i64}]}
// CHECK: kiln.broadcast_to %{{.*}} : tensor<1x1xbf16> -> tensor<10x1xbf16>
// CHECK-NEXT: kiln.dropout
func.func @loss(
    %p0: tensor<4x1x5xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "p0"},
    %x1: tensor<10x2x1x1xf32> {kiln.name = "x1"},
    %p2: tensor<2x1xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p2"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v0 = kiln.reshape %p0 : tensor<4x1x5xf32> -> tensor<10x2x1x1xf32>
  %v1 = kiln.matmul %v0, %x1 transpose_lhs : tensor<10x2x1x1xf32>, tensor<10x2x1x1xf32>
  %v2 = kiln.reduce_mean %p2 dims = [0, 1] : tensor<2x1xf32>
  %v3 = kiln.broadcast_to %v2 : tensor<f32> -> tensor<1x1xf32>
  %v9 = kiln.reduce_max %v3 dims = [0, 1] : tensor<1x1xf32>
  %v10 = kiln.reduce_max %v1 dims = [2, 1] : tensor<10x2x1x1xf32>
  %v11 = kiln.dropout %v9 rate = 0.5 seed = 42 : tensor<f32>
  %v14 = kiln.reduce_sum %v10 dims = [0, 1] : tensor<10x1xf32>
  %v17 = kiln.add %v14, %v11 : tensor<f32>, tensor<f32>
  return %v17 : tensor<f32>
}
