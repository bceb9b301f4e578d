// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @reshape_merge_and_split
// CHECK: %[[A:.*]] = kiln.reshape %{{.*}} : tensor<3x4x10xf32> -> tensor<12x10xf32>
// CHECK: %[[B:.*]] = kiln.reshape %[[A]] : tensor<12x10xf32> -> tensor<2x6x5x2xf32>
// CHECK: return %[[B]] : tensor<2x6x5x2xf32>
func.func @reshape_merge_and_split(%x: tensor<3x4x10xf32>) -> tensor<2x6x5x2xf32> {
  %0 = kiln.reshape %x : tensor<3x4x10xf32> -> tensor<12x10xf32>
  %1 = kiln.reshape %0 : tensor<12x10xf32> -> tensor<2x6x5x2xf32>
  return %1 : tensor<2x6x5x2xf32>
}

// Rank 0 holds one element; masks and indices reshape too.
// CHECK-LABEL: func.func @reshape_scalar_and_int
// CHECK: kiln.reshape %{{.*}} : tensor<1x1xi1> -> tensor<i1>
// CHECK: kiln.reshape %{{.*}} : tensor<7xi32> -> tensor<7x1x1xi32>
func.func @reshape_scalar_and_int(%m: tensor<1x1xi1>, %i: tensor<7xi32>) -> (tensor<i1>, tensor<7x1x1xi32>) {
  %0 = kiln.reshape %m : tensor<1x1xi1> -> tensor<i1>
  %1 = kiln.reshape %i : tensor<7xi32> -> tensor<7x1x1xi32>
  return %0, %1 : tensor<i1>, tensor<7x1x1xi32>
}

// CHECK-LABEL: func.func @broadcast_to_leading_and_ones
// CHECK: kiln.broadcast_to %{{.*}} : tensor<5x1x3xbf16> -> tensor<2x5x7x3xbf16>
// CHECK: kiln.broadcast_to %{{.*}} : tensor<f16> -> tensor<4x9xf16>
// CHECK: kiln.broadcast_to %{{.*}} : tensor<6xi32> -> tensor<6xi32>
func.func @broadcast_to_leading_and_ones(%x: tensor<5x1x3xbf16>, %s: tensor<f16>, %i: tensor<6xi32>)
    -> (tensor<2x5x7x3xbf16>, tensor<4x9xf16>, tensor<6xi32>) {
  %0 = kiln.broadcast_to %x : tensor<5x1x3xbf16> -> tensor<2x5x7x3xbf16>
  %1 = kiln.broadcast_to %s : tensor<f16> -> tensor<4x9xf16>
  %2 = kiln.broadcast_to %i : tensor<6xi32> -> tensor<6xi32>
  return %0, %1, %2 : tensor<2x5x7x3xbf16>, tensor<4x9xf16>, tensor<6xi32>
}
