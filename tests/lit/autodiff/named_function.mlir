// RUN: not kiln-opt %s --kiln-autodiff=function=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: kiln-opt %s --kiln-autodiff="function=b wrt=0" | FileCheck %s

// MISSING: error: kiln-autodiff: no function named 'missing'

// Only @b is differentiated, with respect to argument 0 (not a kiln.param).
// CHECK-NOT: func.func @a_grad
// CHECK-LABEL: func.func @b_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<3xf32> {kiln.name = "grad.arg0"})
module {
  func.func @a(%w: tensor<3xf32>) -> tensor<3xf32> {
    return %w : tensor<3xf32>
  }
  func.func @b(%x: tensor<3xf32>) -> tensor<f32> {
    %0 = kiln.exp %x : tensor<3xf32>
    %1 = kiln.reduce_sum %0 dims = [0] : tensor<3xf32>
    return %1 : tensor<f32>
  }
}
