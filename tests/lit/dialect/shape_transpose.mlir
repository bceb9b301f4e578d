// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// The result type is inferred: dimension k of the result is dimension perm[k].
// CHECK-LABEL: func.func @transpose_rank3
// CHECK: %[[T:.*]] = kiln.transpose %{{.*}} perm = [2, 0, 1] : tensor<3x5x7xf32>
// CHECK: return %[[T]] : tensor<7x3x5xf32>
func.func @transpose_rank3(%x: tensor<3x5x7xf32>) -> tensor<7x3x5xf32> {
  %0 = kiln.transpose %x perm = [2, 0, 1] : tensor<3x5x7xf32>
  return %0 : tensor<7x3x5xf32>
}

// CHECK-LABEL: func.func @transpose_batch_matrices
// CHECK: kiln.transpose %{{.*}} perm = [0, 1, 3, 2] : tensor<2x4x6x9xbf16>
// CHECK: kiln.transpose %{{.*}} perm = [] : tensor<i32>
// CHECK: return %{{.*}}, %{{.*}} : tensor<2x4x9x6xbf16>, tensor<i32>
func.func @transpose_batch_matrices(%x: tensor<2x4x6x9xbf16>, %s: tensor<i32>) -> (tensor<2x4x9x6xbf16>, tensor<i32>) {
  %0 = kiln.transpose %x perm = [0, 1, 3, 2] : tensor<2x4x6x9xbf16>
  %1 = kiln.transpose %s perm = [] : tensor<i32>
  return %0, %1 : tensor<2x4x9x6xbf16>, tensor<i32>
}
