// A batched matmul of a parameter by a rank-5 constant (batch dimensions
// broadcast from 1x2x2 to 2x2x1x2x2) compiled for inference, but training
// refused it: "no GPU kernel for 'kiln.matmul' yet: it needs a
// matrix-multiply kernel" (graph 1796630925:2465, reduced from 18 ops to
// 4). The loss gradient's epilogue evaluates the constant in place, so the
// gemm fusion took a copy of it, and that copy also replaced the matmul's
// operand, which the GEMM kernel reads from memory. Each member now gets
// the one it takes: the matmul the fusion's input, the epilogue the copy.
// RUN: kilnc %s --train=sgd --emit=mlir -o - | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.sgd.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu

// CHECK-LABEL: func.func @forward_backward
// CHECK: kiln.fusion "gemm"
// CHECK-NEXT: ^bb0(%[[LHS:.*]]: tensor<1x2x2xf32>, %[[RHS:.*]]: tensor<2x2x1x2x2xf32>):
// CHECK: %[[COPY:.*]] = kiln.constant dense<2.000000e+00> : tensor<2x2x1x2x2xf32>
// CHECK: kiln.matmul %[[LHS]], %[[RHS]] :
// CHECK: kiln.mul %[[COPY]],
func.func @loss(
    %p1: tensor<1x2x2xf32> {kiln.param = #kiln.init<kaiming>, kiln.name = "p1"},
    %v15: tensor<f32> {kiln.name = "v15"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v5 = kiln.constant dense<2.0> : tensor<2x2x1x2x2xf32>
  %v6 = kiln.matmul %p1, %v5 : tensor<1x2x2xf32>, tensor<2x2x1x2x2xf32>
  %v13 = kiln.mse_loss %v6, %v5 : tensor<2x2x1x2x2xf32>
  %v16 = kiln.add %v15, %v13 : tensor<f32>, tensor<f32>
  return %v16 : tensor<f32>
}
