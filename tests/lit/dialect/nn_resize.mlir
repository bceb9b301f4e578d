// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Nearest with every rounding; the default rounding is not printed.
// CHECK-LABEL: func.func @nearest
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = asymmetric rounding = floor scales = [1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = half_pixel scales = [1.000000e+00, 1.000000e+00, 1.500000e+00, 1.500000e+00] : tensor<2x3x4x5xf32> -> tensor<2x3x6x7xf32>
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = align_corners rounding = ceil
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = pytorch_half_pixel rounding = round_prefer_ceil
func.func @nearest(%x: tensor<2x3x4x5xf32>)
    -> (tensor<2x3x8x10xf32>, tensor<2x3x6x7xf32>, tensor<2x3x2x5xf32>, tensor<2x1x4x5xf32>) {
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric rounding = floor
      scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
  %1 = kiln.resize %x mode = nearest coordinates = half_pixel
      rounding = round_prefer_floor scales = [1.0, 1.0, 1.5, 1.5]
      : tensor<2x3x4x5xf32> -> tensor<2x3x6x7xf32>
  %2 = kiln.resize %x mode = nearest coordinates = align_corners rounding = ceil
      scales = [1.0, 1.0, 0.5, 1.0] : tensor<2x3x4x5xf32> -> tensor<2x3x2x5xf32>
  %3 = kiln.resize %x mode = nearest coordinates = pytorch_half_pixel
      rounding = round_prefer_ceil scales = [1.0, 0.3333, 1.0, 1.0]
      : tensor<2x3x4x5xf32> -> tensor<2x1x4x5xf32>
  return %0, %1, %2, %3
      : tensor<2x3x8x10xf32>, tensor<2x3x6x7xf32>, tensor<2x3x2x5xf32>, tensor<2x1x4x5xf32>
}

// Linear (bilinear over the spatial dims of NHWC) and its gradient.
// CHECK-LABEL: func.func @linear
// CHECK: %[[Y:.*]] = kiln.resize %{{.*}} mode = linear coordinates = half_pixel_symmetric scales = [1.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00] : tensor<2x4x5x3xbf16> -> tensor<2x8x10x3xbf16>
// CHECK: kiln.resize_backward %[[Y]] mode = linear coordinates = half_pixel_symmetric scales = [1.000000e+00, 2.000000e+00, 2.000000e+00, 1.000000e+00] : tensor<2x8x10x3xbf16> -> tensor<2x4x5x3xbf16>
func.func @linear(%x: tensor<2x4x5x3xbf16>) -> tensor<2x4x5x3xbf16> {
  %0 = kiln.resize %x mode = linear coordinates = half_pixel_symmetric
      scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x4x5x3xbf16> -> tensor<2x8x10x3xbf16>
  %1 = kiln.resize_backward %0 mode = linear coordinates = half_pixel_symmetric
      scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x8x10x3xbf16> -> tensor<2x4x5x3xbf16>
  return %1 : tensor<2x4x5x3xbf16>
}
