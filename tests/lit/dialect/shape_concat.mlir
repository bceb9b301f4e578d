// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @concat_three
// CHECK: %[[C:.*]] = kiln.concat %{{.*}}, %{{.*}}, %{{.*}} dim = 1 : tensor<2x3x5xf32>, tensor<2x1x5xf32>, tensor<2x7x5xf32>
// CHECK: return %[[C]] : tensor<2x11x5xf32>
func.func @concat_three(%a: tensor<2x3x5xf32>, %b: tensor<2x1x5xf32>, %c: tensor<2x7x5xf32>) -> tensor<2x11x5xf32> {
  %0 = kiln.concat %a, %b, %c dim = 1 : tensor<2x3x5xf32>, tensor<2x1x5xf32>, tensor<2x7x5xf32>
  return %0 : tensor<2x11x5xf32>
}

// CHECK-LABEL: func.func @concat_single_and_leading
// CHECK: kiln.concat %{{.*}} dim = 0 : tensor<3xi32>
// CHECK: kiln.concat %{{.*}}, %{{.*}} dim = 0 : tensor<4x6xbf16>, tensor<1x6xbf16>
// CHECK: return %{{.*}}, %{{.*}} : tensor<3xi32>, tensor<5x6xbf16>
func.func @concat_single_and_leading(%i: tensor<3xi32>, %a: tensor<4x6xbf16>, %b: tensor<1x6xbf16>) -> (tensor<3xi32>, tensor<5x6xbf16>) {
  %0 = kiln.concat %i dim = 0 : tensor<3xi32>
  %1 = kiln.concat %a, %b dim = 0 : tensor<4x6xbf16>, tensor<1x6xbf16>
  return %0, %1 : tensor<3xi32>, tensor<5x6xbf16>
}
