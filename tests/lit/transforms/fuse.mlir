// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// A matmul takes its bias and activation as epilogue; the pre-activation is
// also returned, so it becomes a second result. The constant is copied in.
// CHECK-LABEL: func.func @mlp_layer
// CHECK: %[[G:.*]]:2 = kiln.fusion "gemm" (%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.gelu
// CHECK-NEXT: kiln.yield
// The scaling after the reduction is its epilogue, with its constant copied
// in (reduction fusion is covered in fuse_reductions.mlir).
// CHECK: %[[R:.*]] = kiln.fusion "reduction" (%[[G]]#1)
// CHECK: kiln.constant dense<5.000000e-01>
// CHECK: kiln.reduce_sum
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK: return %[[R]], %[[G]]#0
func.func @mlp_layer(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>)
    -> (tensor<f32>, tensor<8x32xf32>) {
  %0 = kiln.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32>
  %1 = kiln.add %0, %b : tensor<8x32xf32>, tensor<32xf32>
  %2 = kiln.gelu %1 approximate = tanh : tensor<8x32xf32>
  %3 = kiln.reduce_sum %2 dims = [0, 1] : tensor<8x32xf32>
  %c = kiln.constant dense<0.5> : tensor<f32>
  %4 = kiln.mul %3, %c : tensor<f32>, tensor<f32>
  return %4, %1 : tensor<f32>, tensor<8x32xf32>
}

// Element-wise trees fuse into one loop; reshape stays a view between kernels.
// CHECK-LABEL: func.func @pointwise_tree
// CHECK: %[[P:.*]] = kiln.fusion "pointwise" (%arg0, %arg1)
// CHECK-COUNT-3: kiln.
// CHECK: kiln.yield
// CHECK: kiln.reshape %[[P]]
func.func @pointwise_tree(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<32xf32> {
  %0 = kiln.sub %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.exp %0 : tensor<4x8xf32>
  %2 = kiln.tanh %1 : tensor<4x8xf32>
  %3 = kiln.reshape %2 : tensor<4x8xf32> -> tensor<32xf32>
  return %3 : tensor<32xf32>
}

// Results that live in buffers of their own (gradients, updates) are values
// of their own: the gradients of both operands of `a + b` are one value,
// and a gradient may be an argument; each such result after the first is
// a reshape to its own type, which a kernel writes there (the copy of the
// argument joins the independent kernel of the product).
// CHECK-LABEL: func.func @shared_gradients
// CHECK: %[[G:.*]]:2 = kiln.fusion "pointwise" (%arg0, %arg1)
// CHECK: kiln.mul
// CHECK-NEXT: %[[A:.*]] = kiln.reshape %arg3
// CHECK-NEXT: kiln.yield %{{.*}}, %[[A]]
// CHECK: %[[C:.*]] = kiln.fusion "pointwise" (%[[G]]#0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reshape
// CHECK: return %[[G]]#0, %[[C]], %[[G]]#1
func.func @shared_gradients(%d: tensor<4xf32>, %x: tensor<4xf32>)
    -> (tensor<4xf32> {kiln.name = "grad.a", kiln.role = "gradient"},
        tensor<4xf32> {kiln.name = "grad.b", kiln.role = "gradient"},
        tensor<4xf32> {kiln.name = "grad.c", kiln.role = "gradient"}) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %g = kiln.mul %d, %two : tensor<4xf32>, tensor<f32>
  return %g, %g, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
