// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @reduce_dims
// CHECK: kiln.reduce_sum %{{.*}} dims = [2, 0] : tensor<3x5x7xf32>
// CHECK: kiln.reduce_mean %{{.*}} dims = [1] keepdim : tensor<3x5x7xbf16>
// CHECK: kiln.reduce_max %{{.*}} dims = [0, 2] keepdim : tensor<3x5x7xi32>
// CHECK: kiln.reduce_min %{{.*}} dims = [1] : tensor<3x5x7xf16>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<5xf32>, tensor<3x1x7xbf16>, tensor<1x5x1xi32>, tensor<3x7xf16>
func.func @reduce_dims(%a: tensor<3x5x7xf32>, %b: tensor<3x5x7xbf16>, %c: tensor<3x5x7xi32>, %d: tensor<3x5x7xf16>)
    -> (tensor<5xf32>, tensor<3x1x7xbf16>, tensor<1x5x1xi32>, tensor<3x7xf16>) {
  %0 = kiln.reduce_sum %a dims = [2, 0] : tensor<3x5x7xf32>
  %1 = kiln.reduce_mean %b dims = [1] keepdim : tensor<3x5x7xbf16>
  %2 = kiln.reduce_max %c dims = [0, 2] keepdim : tensor<3x5x7xi32>
  %3 = kiln.reduce_min %d dims = [1] : tensor<3x5x7xf16>
  return %0, %1, %2, %3 : tensor<5xf32>, tensor<3x1x7xbf16>, tensor<1x5x1xi32>, tensor<3x7xf16>
}

// Reducing every dimension: sum_all, mean_all, max_all, min_all.
// CHECK-LABEL: func.func @reduce_all
// CHECK: kiln.reduce_sum %{{.*}} dims = [0, 1] : tensor<6x9xf32>
// CHECK: kiln.reduce_mean %{{.*}} dims = [0, 1] : tensor<6x9xf32>
// CHECK: kiln.reduce_max %{{.*}} dims = [1, 0] : tensor<6x9xf32>
// CHECK: kiln.reduce_min %{{.*}} dims = [0, 1] keepdim : tensor<6x9xf32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<1x1xf32>
func.func @reduce_all(%x: tensor<6x9xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<1x1xf32>) {
  %0 = kiln.reduce_sum %x dims = [0, 1] : tensor<6x9xf32>
  %1 = kiln.reduce_mean %x dims = [0, 1] : tensor<6x9xf32>
  %2 = kiln.reduce_max %x dims = [1, 0] : tensor<6x9xf32>
  %3 = kiln.reduce_min %x dims = [0, 1] keepdim : tensor<6x9xf32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<1x1xf32>
}

// argmax gives i32 indices.
// CHECK-LABEL: func.func @argmax
// CHECK: kiln.argmax %{{.*}} dim = 1 : tensor<4x10x3xf32>
// CHECK: kiln.argmax %{{.*}} dim = 0 keepdim : tensor<5x2xi32>
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x3xi32>, tensor<1x2xi32>
func.func @argmax(%x: tensor<4x10x3xf32>, %i: tensor<5x2xi32>) -> (tensor<4x3xi32>, tensor<1x2xi32>) {
  %0 = kiln.argmax %x dim = 1 : tensor<4x10x3xf32>
  %1 = kiln.argmax %i dim = 0 keepdim : tensor<5x2xi32>
  return %0, %1 : tensor<4x3xi32>, tensor<1x2xi32>
}
