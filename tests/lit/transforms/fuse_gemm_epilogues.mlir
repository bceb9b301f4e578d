// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// The gradient of a mean squared error fuses into the read-out matmul's
// epilogue: the negated target is computed per element from its input,
// constants are copied in, and the loss reduction (which reads the
// prediction but feeds nothing of the epilogue) moves below it.
// CHECK-LABEL: func.func @loss_gradient
// CHECK: %[[G:.*]]:2 = kiln.fusion "gemm" (%arg0, %arg1, %arg2, %arg3)
// CHECK: %[[M:.*]] = kiln.matmul
// CHECK-NEXT: %[[P:.*]] = kiln.add %[[M]], %{{.*}} : tensor<4x8x1xf32>, tensor<1xf32>
// CHECK-NEXT: %[[NY:.*]] = kiln.mul %{{.*}}, %{{.*}} : tensor<4x8x1xf32>, tensor<f32>
// CHECK-NEXT: %[[D:.*]] = kiln.add %[[P]], %[[NY]]
// CHECK-NEXT: %[[S:.*]] = kiln.mul %[[D]], %{{.*}} : tensor<4x8x1xf32>, tensor<f32>
// CHECK-NEXT: kiln.yield %[[P]], %[[S]]
// CHECK: %[[L:.*]] = kiln.fusion "reduction" (%[[G]]#0, %arg3)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.mse_loss
// CHECK: return %[[L]], %[[G]]#1
func.func @loss_gradient(%f: tensor<4x8x16xf32>, %w: tensor<16x1xf32>, %b: tensor<1xf32>,
                         %y: tensor<4x8x1xf32>) -> (tensor<f32>, tensor<4x8x1xf32>) {
  %m = kiln.matmul %f, %w : tensor<4x8x16xf32>, tensor<16x1xf32>
  %p = kiln.add %m, %b : tensor<4x8x1xf32>, tensor<1xf32>
  %loss = kiln.mse_loss %p, %y reduction = mean : tensor<4x8x1xf32>
  %c = kiln.constant dense<-1.0> : tensor<f32>
  %ny = kiln.mul %y, %c : tensor<4x8x1xf32>, tensor<f32>
  %d = kiln.add %p, %ny : tensor<4x8x1xf32>, tensor<4x8x1xf32>
  %k = kiln.constant dense<3.125e-02> : tensor<f32>
  %g = kiln.mul %d, %k : tensor<4x8x1xf32>, tensor<f32>
  return %loss, %g : tensor<f32>, tensor<4x8x1xf32>
}

// The gradient of an MLP's hidden layer: the activation's derivative, an
// element-wise tree of the pre-activation with constants that only this
// product needs, is computed inside the epilogue.
// CHECK-LABEL: func.func @activation_derivative
// CHECK: %[[G:.*]] = kiln.fusion "gemm" (%arg2, %arg0, %arg1)
// CHECK: kiln.tanh
// CHECK: kiln.matmul
// CHECK: kiln.mul
// CHECK: kiln.sub
// CHECK: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion
// CHECK: return %[[G]]
func.func @activation_derivative(%dy: tensor<8x16xf32>, %w: tensor<32x16xf32>, %u: tensor<8x32xf32>)
    -> tensor<8x32xf32> {
  %t = kiln.tanh %u : tensor<8x32xf32>
  %h = kiln.matmul %dy, %w transpose_rhs : tensor<8x16xf32>, tensor<32x16xf32>
  %tt = kiln.mul %t, %t : tensor<8x32xf32>, tensor<8x32xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %dt = kiln.sub %one, %tt : tensor<f32>, tensor<8x32xf32>
  %r = kiln.mul %h, %dt : tensor<8x32xf32>, tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}

// An optimizer's update stays out of the epilogue of the matmul that
// computes the gradient (it joins the multi-tensor optimizer kernel).
// CHECK-LABEL: func.func @update
// CHECK: %[[G:.*]] = kiln.fusion "gemm" (%arg1, %arg2)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%[[G]], %arg0)
func.func @update(%w: tensor<8x4xf32>, %x: tensor<16x8xf32>, %dy: tensor<16x4xf32>)
    -> (tensor<8x4xf32> {kiln.updates = 0 : i64}) {
  %g = kiln.matmul %x, %dy transpose_lhs : tensor<16x8xf32>, tensor<16x4xf32>
  %lr = kiln.constant dense<0.1> : tensor<f32>
  %s = kiln.mul %g, %lr : tensor<8x4xf32>, tensor<f32>
  %w2 = kiln.sub %w, %s : tensor<8x4xf32>, tensor<8x4xf32>
  return %w2 : tensor<8x4xf32>
}

// A residual block's input, cast for the product and added after it: the
// cast feeds the matmul, which reads its operands from memory, so it stays
// out of the epilogue (a kernel of its own) although the epilogue reads it
// too.
// CHECK-LABEL: func.func @residual_of_the_product_operand
// CHECK: %[[C:.*]] = kiln.fusion "pointwise" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.cast
// CHECK: %[[G:.*]] = kiln.fusion "gemm" (%[[C]], %arg1)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.matmul
// CHECK-NEXT: kiln.tanh
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
// CHECK: return %[[G]]
func.func @residual_of_the_product_operand(%x: tensor<16x8xf32>, %w: tensor<8x8xbf16>)
    -> tensor<16x8xbf16> {
  %c = kiln.cast %x : tensor<16x8xf32> to tensor<16x8xbf16>
  %m = kiln.matmul %c, %w : tensor<16x8xbf16>, tensor<8x8xbf16>
  %t = kiln.tanh %m : tensor<16x8xbf16>
  %r = kiln.add %c, %t : tensor<16x8xbf16>, tensor<16x8xbf16>
  return %r : tensor<16x8xbf16>
}
