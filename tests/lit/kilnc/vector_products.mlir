// Products with one result column or row over K > 1 and a matrix of a
// million elements or more are reductions, not GEMM tiles: the multiply by
// the widened vector fuses into the reduction's loads and the rounding into
// its store. A product with a real N and M, and a small matrix-vector
// product (a GEMM takes its neighbours into its epilogue), keep their GEMM.
// RUN: kilnc %s --inference --function f --emit=mlir | FileCheck %s
// RUN: kilnc %s --inference --function f -o %t.kiln

// CHECK: kiln.fusion "reduction"
// CHECK-SAME: (tensor<1x1024xbf16>, tensor<4x256x1024xbf16>) -> tensor<4x256x1xbf16>
// CHECK: kiln.cast {{.*}} to tensor<4x256x1024xf32>
// CHECK: kiln.reduce_sum {{.*}} dims = [2] keepdim
// CHECK: kiln.cast {{.*}} to tensor<4x256x1xbf16>
// CHECK: kiln.fusion "reduction"
// CHECK-SAME: -> tensor<1x1024xf32>
// CHECK: kiln.fusion "gemm"
// CHECK-SAME: -> tensor<50x1024xf32>
// CHECK: kiln.fusion "gemm"
// CHECK-SAME: -> tensor<50x1xf32>
// CHECK-NOT: kiln.fusion "reduction"
func.func @f(%a: tensor<4x256x1024xbf16>, %v: tensor<1024x1xbf16>,
             %r: tensor<1x1024xf32>, %m: tensor<1024x1024xf32>, %b: tensor<50x1024xf32>)
    -> (tensor<4x256x1xbf16>, tensor<1x1024xf32>, tensor<50x1024xf32>, tensor<50x1xf32>) {
  %0 = kiln.matmul %a, %v : tensor<4x256x1024xbf16>, tensor<1024x1xbf16>
  %1 = kiln.matmul %r, %m : tensor<1x1024xf32>, tensor<1024x1024xf32>
  %2 = kiln.matmul %b, %m : tensor<50x1024xf32>, tensor<1024x1024xf32>
  %3 = kiln.matmul %b, %r transpose_rhs : tensor<50x1024xf32>, tensor<1x1024xf32>
  return %0, %1, %2, %3 : tensor<4x256x1xbf16>, tensor<1x1024xf32>, tensor<50x1024xf32>, tensor<50x1xf32>
}
