// Products with one result column or row over K > 1 are reductions, not GEMM
// tiles: the multiply by the widened vector fuses into the reduction's loads
// and the rounding into its store, one kernel each. A product with a real
// N and M keeps its GEMM kernel.
// RUN: kilnc %s --inference --function f --emit=mlir | FileCheck %s
// RUN: kilnc %s --inference --function f -o %t.kiln

// CHECK: kiln.fusion "reduction"
// CHECK-SAME: (tensor<1x300xbf16>, tensor<4x50x300xbf16>) -> tensor<4x50x1xbf16>
// CHECK: kiln.cast {{.*}} to tensor<4x50x300xf32>
// CHECK: kiln.reduce_sum {{.*}} dims = [2] keepdim
// CHECK: kiln.cast {{.*}} to tensor<4x50x1xbf16>
// CHECK: kiln.fusion "reduction"
// CHECK-SAME: -> tensor<1x70xf32>
// CHECK: kiln.fusion "gemm"
// CHECK-SAME: -> tensor<50x70xf32>
// CHECK-NOT: kiln.fusion "gemm"
func.func @f(%a: tensor<4x50x300xbf16>, %v: tensor<300x1xbf16>,
             %r: tensor<1x300xf32>, %m: tensor<300x70xf32>, %b: tensor<50x300xf32>)
    -> (tensor<4x50x1xbf16>, tensor<1x70xf32>, tensor<50x70xf32>) {
  %0 = kiln.matmul %a, %v : tensor<4x50x300xbf16>, tensor<300x1xbf16>
  %1 = kiln.matmul %r, %m : tensor<1x300xf32>, tensor<300x70xf32>
  %2 = kiln.matmul %b, %m : tensor<50x300xf32>, tensor<300x70xf32>
  return %0, %1, %2 : tensor<4x50x1xbf16>, tensor<1x70xf32>, tensor<50x70xf32>
}
