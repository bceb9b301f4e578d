// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @matmul_plain_and_transposed
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32>
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<8x4xf32>, tensor<8x16xf32>
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<16x8xf32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
func.func @matmul_plain_and_transposed(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %at: tensor<8x4xf32>, %bt: tensor<16x8xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = kiln.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = kiln.matmul %a, %bt transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32>
  %2 = kiln.matmul %at, %b transpose_lhs : tensor<8x4xf32>, tensor<8x16xf32>
  %3 = kiln.matmul %at, %bt transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<16x8xf32>
  return %0, %1, %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// Batch dims broadcast like numpy: [5, 1] with [3] gives [5, 3].
// CHECK-LABEL: func.func @matmul_batched
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<5x1x9x6xbf16>, tensor<3x9x2xbf16>
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : tensor<7x3x5xf16>, tensor<5x11xf16>
// CHECK: return %{{.*}}, %{{.*}} : tensor<5x3x6x2xbf16>, tensor<7x3x11xf16>
func.func @matmul_batched(%a: tensor<5x1x9x6xbf16>, %b: tensor<3x9x2xbf16>, %c: tensor<7x3x5xf16>, %d: tensor<5x11xf16>)
    -> (tensor<5x3x6x2xbf16>, tensor<7x3x11xf16>) {
  %0 = kiln.matmul %a, %b transpose_lhs : tensor<5x1x9x6xbf16>, tensor<3x9x2xbf16>
  %1 = kiln.matmul %c, %d : tensor<7x3x5xf16>, tensor<5x11xf16>
  return %0, %1 : tensor<5x3x6x2xbf16>, tensor<7x3x11xf16>
}
