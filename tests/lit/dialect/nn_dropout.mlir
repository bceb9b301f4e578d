// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @dropout
// CHECK: %[[A:.*]] = kiln.dropout %{{.*}}, %{{.*}} rate = 1.000000e-01 seed = 1 stream = 2 : tensor<8x3x129xf32>
// CHECK: %[[B:.*]] = kiln.dropout %{{.*}} rate = 0.000000e+00 seed = 42 : tensor<8x3x129xf32>
// CHECK: return %[[A]], %[[B]] : tensor<8x3x129xf32>, tensor<8x3x129xf32>
func.func @dropout(%x: tensor<8x3x129xf32>, %step: tensor<i32>)
    -> (tensor<8x3x129xf32>, tensor<8x3x129xf32>) {
  %0 = kiln.dropout %x, %step rate = 0.1 seed = 1 stream = 2 : tensor<8x3x129xf32>
  %1 = kiln.dropout %x rate = 0.0 seed = 42 stream = 0 : tensor<8x3x129xf32>
  return %0, %1 : tensor<8x3x129xf32>, tensor<8x3x129xf32>
}
