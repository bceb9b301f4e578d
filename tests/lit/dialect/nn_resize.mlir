// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Nearest with every rounding; the default rounding is not printed.
// CHECK-LABEL: func.func @nearest
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = asymmetric rounding = floor scales = [1.0, 1.0, 2.0, 2.0] : tensor<2x3x4x5xf32> -> tensor<2x3x8x10xf32>
// CHECK: kiln.resize %{{.*}} mode = nearest coordinates = half_pixel scales = [1.0, 1.0, 1.5, 1.5] : tensor<2x3x4x5xf32> -> tensor<2x3x6x7xf32>
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
// CHECK: %[[Y:.*]] = kiln.resize %{{.*}} mode = linear coordinates = half_pixel_symmetric scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x4x5x3xbf16> -> tensor<2x8x10x3xbf16>
// CHECK: kiln.resize_backward %[[Y]] mode = linear coordinates = half_pixel_symmetric scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x8x10x3xbf16> -> tensor<2x4x5x3xbf16>
func.func @linear(%x: tensor<2x4x5x3xbf16>) -> tensor<2x4x5x3xbf16> {
  %0 = kiln.resize %x mode = linear coordinates = half_pixel_symmetric
      scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x4x5x3xbf16> -> tensor<2x8x10x3xbf16>
  %1 = kiln.resize_backward %0 mode = linear coordinates = half_pixel_symmetric
      scales = [1.0, 2.0, 2.0, 1.0] : tensor<2x8x10x3xbf16> -> tensor<2x4x5x3xbf16>
  return %1 : tensor<2x4x5x3xbf16>
}

// Scales print back to the same doubles (MLIR's own printing of f64 arrays
// keeps six digits, and 4/3 would come back as 1.333333).
// CHECK-LABEL: func.func @exact_scales
// CHECK: scales = [1.0, 1.3333333333333333, 0.1, 2.5e-07] : tensor<4x3x5x4000000xf32> -> tensor<4x4x1x1xf32>
func.func @exact_scales(%x: tensor<4x3x5x4000000xf32>) -> tensor<4x4x1x1xf32> {
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric
      scales = [1.0, 1.3333333333333333, 0.1, 2.5e-07] : tensor<4x3x5x4000000xf32> -> tensor<4x4x1x1xf32>
  return %0 : tensor<4x4x1x1xf32>
}
