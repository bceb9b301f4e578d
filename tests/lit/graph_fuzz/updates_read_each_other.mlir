// The gradient of each factor of an outer product is the other factor (a
// view of it: 1x2 read as 2x1 and back) times the loss's gradient. Both
// products went into the training step's optimizer kernel, beside the
// updates that overwrite the parameters they read in place: the 1x2 threads
// read what the 2x1 threads overwrite and the other way round, and
// pointwise codegen refused "results are written over inputs that other
// results of the fusion are computed from, both ways" (graph
// 1796630925:4035, reduced from 9 ops to 3). An update's operand that reads
// a view of an updated parameter is now computed before the updates, by a
// kernel of its own.
// RUN: kilnc %s --train=sgd --emit=mlir -o - | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.sgd.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu

// CHECK-LABEL: func.func @train_step
// CHECK: %[[P4:.*]] = kiln.reshape %arg1
// CHECK: kiln.fusion "pointwise" ({{.*}}, %[[P4]])
// CHECK: %[[P0:.*]] = kiln.reshape %arg0
// CHECK: kiln.fusion "pointwise" (%[[P0]],
// CHECK: kiln.fusion "optimizer"
// CHECK-NOT: kiln.reshape
// CHECK: return
func.func @loss(
    %p0: tensor<1x2xf32> {kiln.param = #kiln.init<kaiming>, kiln.name = "p0"},
    %p4: tensor<2x1xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p4"},
    %x6: tensor<1x1xf32> {kiln.name = "x6"},
    %v6: tensor<f32> {kiln.name = "v6"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v1 = kiln.matmul %p0, %p4 : tensor<1x2xf32>, tensor<2x1xf32>
  %v4 = kiln.mse_loss %v1, %x6 reduction = mean : tensor<1x1xf32>
  %v7 = kiln.add %v6, %v4 : tensor<f32>, tensor<f32>
  return %v7 : tensor<f32>
}
