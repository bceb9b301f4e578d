// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @softmax
// CHECK: %[[S:.*]] = kiln.softmax %{{.*}} dim = 1 : tensor<3x10x7xf32>
// CHECK: %[[L:.*]] = kiln.log_softmax %{{.*}} dim = 2 : tensor<3x10x7xbf16>
// CHECK: return %[[S]], %[[L]] : tensor<3x10x7xf32>, tensor<3x10x7xbf16>
func.func @softmax(%x: tensor<3x10x7xf32>, %y: tensor<3x10x7xbf16>)
    -> (tensor<3x10x7xf32>, tensor<3x10x7xbf16>) {
  %0 = kiln.softmax %x dim = 1 : tensor<3x10x7xf32>
  %1 = kiln.log_softmax %y dim = 2 : tensor<3x10x7xbf16>
  return %0, %1 : tensor<3x10x7xf32>, tensor<3x10x7xbf16>
}

// CHECK-LABEL: func.func @softmax_rank1_f16
// CHECK: kiln.softmax %{{.*}} dim = 0 : tensor<5xf16>
func.func @softmax_rank1_f16(%x: tensor<5xf16>) -> tensor<5xf16> {
  %0 = kiln.softmax %x dim = 0 : tensor<5xf16>
  return %0 : tensor<5xf16>
}
