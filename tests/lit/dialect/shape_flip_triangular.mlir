// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @flip
// CHECK: kiln.flip %{{.*}} dims = [0, 2] : tensor<2x3x5xf32>
// CHECK: kiln.flip %{{.*}} dims = [1] : tensor<4x7xi1>
// CHECK: kiln.flip %{{.*}} dims = [] : tensor<6xi32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x5xf32>, tensor<4x7xi1>, tensor<6xi32>
func.func @flip(%x: tensor<2x3x5xf32>, %m: tensor<4x7xi1>, %i: tensor<6xi32>)
    -> (tensor<2x3x5xf32>, tensor<4x7xi1>, tensor<6xi32>) {
  %0 = kiln.flip %x dims = [0, 2] : tensor<2x3x5xf32>
  %1 = kiln.flip %m dims = [1] : tensor<4x7xi1>
  %2 = kiln.flip %i dims = [] : tensor<6xi32>
  return %0, %1, %2 : tensor<2x3x5xf32>, tensor<4x7xi1>, tensor<6xi32>
}

// The default diagonal 0 is not printed.
// CHECK-LABEL: func.func @triu
// CHECK: kiln.triu %{{.*}} : tensor<3x5x7xf32>
// CHECK: kiln.triu %{{.*}} : tensor<4x4xbf16>
// CHECK: kiln.triu %{{.*}} diagonal = 2 : tensor<2x1x6x3xi32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x5x7xf32>, tensor<4x4xbf16>, tensor<2x1x6x3xi32>
func.func @triu(%x: tensor<3x5x7xf32>, %s: tensor<4x4xbf16>, %i: tensor<2x1x6x3xi32>)
    -> (tensor<3x5x7xf32>, tensor<4x4xbf16>, tensor<2x1x6x3xi32>) {
  %0 = kiln.triu %x : tensor<3x5x7xf32>
  %1 = kiln.triu %s diagonal = 0 : tensor<4x4xbf16>
  %2 = kiln.triu %i diagonal = 2 : tensor<2x1x6x3xi32>
  return %0, %1, %2 : tensor<3x5x7xf32>, tensor<4x4xbf16>, tensor<2x1x6x3xi32>
}

// CHECK-LABEL: func.func @tril
// CHECK: kiln.tril %{{.*}} diagonal = -1 : tensor<8x8xi1>
// CHECK: kiln.tril %{{.*}} : tensor<2x5x3xf16>
// CHECK: return %{{.*}}, %{{.*}} : tensor<8x8xi1>, tensor<2x5x3xf16>
func.func @tril(%m: tensor<8x8xi1>, %h: tensor<2x5x3xf16>) -> (tensor<8x8xi1>, tensor<2x5x3xf16>) {
  %0 = kiln.tril %m diagonal = -1 : tensor<8x8xi1>
  %1 = kiln.tril %h : tensor<2x5x3xf16>
  return %0, %1 : tensor<8x8xi1>, tensor<2x5x3xf16>
}
