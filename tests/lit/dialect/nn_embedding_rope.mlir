// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @embedding
// CHECK: %[[A:.*]] = kiln.embedding %{{.*}}, %{{.*}} : tensor<1000x48xf32>, tensor<4x32xi32>
// CHECK: %[[B:.*]] = kiln.embedding %{{.*}}, %{{.*}} : tensor<7x3xbf16>, tensor<i32>
// CHECK: return %[[A]], %[[B]] : tensor<4x32x48xf32>, tensor<3xbf16>
func.func @embedding(%table: tensor<1000x48xf32>, %tokens: tensor<4x32xi32>,
                     %small: tensor<7x3xbf16>, %one: tensor<i32>)
    -> (tensor<4x32x48xf32>, tensor<3xbf16>) {
  %0 = kiln.embedding %table, %tokens : tensor<1000x48xf32>, tensor<4x32xi32>
  %1 = kiln.embedding %small, %one : tensor<7x3xbf16>, tensor<i32>
  return %0, %1 : tensor<4x32x48xf32>, tensor<3xbf16>
}

// CHECK-LABEL: func.func @rope
// CHECK: %[[A:.*]] = kiln.rope %{{.*}} theta = 5.000000e+05 position_offset = 7 : tensor<2x16x4x64xbf16>
// CHECK: %[[B:.*]] = kiln.rope %{{.*}} : tensor<2x16x4x64xbf16>
// CHECK: %[[C:.*]] = kiln.rope %{{.*}} position_offset = 2 inverse : tensor<2x16x4x64xbf16>
// CHECK: return %[[A]], %[[B]], %[[C]] : tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>
func.func @rope(%q: tensor<2x16x4x64xbf16>) -> (tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>) {
  %0 = kiln.rope %q theta = 500000.0 position_offset = 7 : tensor<2x16x4x64xbf16>
  %1 = kiln.rope %q theta = 10000.0 : tensor<2x16x4x64xbf16>
  %2 = kiln.rope %q position_offset = 2 inverse : tensor<2x16x4x64xbf16>
  return %0, %1, %2 : tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>, tensor<2x16x4x64xbf16>
}
