// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// A transpose of a matmul operand's last two dimensions is the matmul's
// transpose flag: the GEMM reads the operand in place, and no kernel copies
// it.
// CHECK-LABEL: func.func @weight_transposed
// CHECK-NOT: kiln.transpose
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<32x64xbf16>, tensor<16x64xbf16>
// CHECK-NOT: kiln.transpose
func.func @weight_transposed(%x: tensor<32x64xbf16>, %w: tensor<16x64xbf16>) -> tensor<32x16xbf16> {
  %wt = kiln.transpose %w perm = [1, 0] : tensor<16x64xbf16>
  %y = kiln.matmul %x, %wt : tensor<32x64xbf16>, tensor<64x16xbf16>
  return %y : tensor<32x16xbf16>
}

// A flag already set is toggled: two swaps cancel. Batched operands swap
// their last two dimensions only.
// CHECK-LABEL: func.func @toggled_and_batched
// CHECK-NOT: kiln.transpose
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<2x8x4xf32>, tensor<2x6x4xf32>
// CHECK-NOT: transpose_lhs
func.func @toggled_and_batched(%a: tensor<2x8x4xf32>, %b: tensor<2x6x4xf32>) -> tensor<2x8x6xf32> {
  %at = kiln.transpose %a perm = [0, 2, 1] : tensor<2x8x4xf32>
  %bt = kiln.transpose %b perm = [0, 2, 1] : tensor<2x6x4xf32>
  %y = kiln.matmul %at, %bt transpose_lhs : tensor<2x4x8xf32>, tensor<2x4x6xf32>
  return %y : tensor<2x8x6xf32>
}

// Other permutations stay transposes (their own kernel), and a transpose
// that something else reads stays for it.
// CHECK-LABEL: func.func @kept
// CHECK: kiln.fusion "pointwise"
// CHECK: kiln.transpose %{{.*}} perm = [1, 0, 2]
// CHECK: kiln.transpose %{{.*}} perm = [1, 0]
// CHECK: kiln.fusion "gemm"
// CHECK: kiln.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<2x4x8xf32>, tensor<6x8xf32>
func.func @kept(%a: tensor<4x2x8xf32>, %b: tensor<6x8xf32>) -> (tensor<2x4x6xf32>, tensor<8x6xf32>) {
  %at = kiln.transpose %a perm = [1, 0, 2] : tensor<4x2x8xf32>
  %bt = kiln.transpose %b perm = [1, 0] : tensor<6x8xf32>
  %y = kiln.matmul %at, %bt : tensor<2x4x8xf32>, tensor<8x6xf32>
  return %y, %bt : tensor<2x4x6xf32>, tensor<8x6xf32>
}
