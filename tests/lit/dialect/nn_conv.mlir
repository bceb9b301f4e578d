// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Grouped, strided, padded NCHW convolution with bias:
// OH = floor((17 + 1 + 1 - 1*(3 - 1) - 1) / 2) + 1 = 9.
// CHECK-LABEL: func.func @conv2d_nchw
// CHECK: %[[A:.*]] = kiln.conv2d %{{.*}}, %{{.*}}, %{{.*}} layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] groups = 2 : tensor<2x6x17x17xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>
// CHECK: return %[[A]] : tensor<2x8x9x9xf32>
func.func @conv2d_nchw(%x: tensor<2x6x17x17xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>)
    -> tensor<2x8x9x9xf32> {
  %0 = kiln.conv2d %x, %w, %b layout = nchw stride = [2, 2] padding = [1, 1, 1, 1]
      dilation = [1, 1] groups = 2
      : tensor<2x6x17x17xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>
  return %0 : tensor<2x8x9x9xf32>
}

// NHWC, asymmetric padding, dilation, no bias:
// OH = floor((10 + 0 + 1 - 2*(3 - 1) - 1) / 1) + 1 = 7,
// OW = floor((12 + 2 + 0 - 3*(2 - 1) - 1) / 3) + 1 = 4.
// CHECK-LABEL: func.func @conv2d_nhwc
// CHECK: %[[A:.*]] = kiln.conv2d %{{.*}}, %{{.*}} layout = nhwc stride = [1, 3] padding = [0, 1, 2, 0] dilation = [2, 3] : tensor<3x10x12x5xbf16>, tensor<7x3x2x5xbf16>
// CHECK: %[[B:.*]] = kiln.conv2d %{{.*}}, %{{.*}} layout = nhwc : tensor<3x10x12x5xbf16>, tensor<7x3x2x5xbf16>
// CHECK: return %[[A]], %[[B]] : tensor<3x7x4x7xbf16>, tensor<3x8x11x7xbf16>
func.func @conv2d_nhwc(%x: tensor<3x10x12x5xbf16>, %w: tensor<7x3x2x5xbf16>)
    -> (tensor<3x7x4x7xbf16>, tensor<3x8x11x7xbf16>) {
  %0 = kiln.conv2d %x, %w layout = nhwc stride = [1, 3] padding = [0, 1, 2, 0] dilation = [2, 3]
      : tensor<3x10x12x5xbf16>, tensor<7x3x2x5xbf16>
  %1 = kiln.conv2d %x, %w layout = nhwc : tensor<3x10x12x5xbf16>, tensor<7x3x2x5xbf16>
  return %0, %1 : tensor<3x7x4x7xbf16>, tensor<3x8x11x7xbf16>
}

// Depthwise: groups = C = O.
// CHECK-LABEL: func.func @conv2d_depthwise
// CHECK: kiln.conv2d %{{.*}}, %{{.*}} layout = nchw padding = [1, 1, 1, 1] groups = 6 : tensor<1x6x5x5xf16>, tensor<6x1x3x3xf16>
func.func @conv2d_depthwise(%x: tensor<1x6x5x5xf16>, %w: tensor<6x1x3x3xf16>) -> tensor<1x6x5x5xf16> {
  %0 = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] groups = 6
      : tensor<1x6x5x5xf16>, tensor<6x1x3x3xf16>
  return %0 : tensor<1x6x5x5xf16>
}

// OH = floor((15 + 1 + 1 - 3) / 2) + 1 = 8.
// CHECK-LABEL: func.func @pools
// CHECK: %[[A:.*]] = kiln.max_pool2d %{{.*}} layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x16x15x15xf32>
// CHECK: %[[B:.*]] = kiln.avg_pool2d %{{.*}} layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] count_include_pad : tensor<2x16x15x15xf32>
// CHECK: %[[C:.*]] = kiln.avg_pool2d %{{.*}} layout = nhwc kernel = [2, 3] stride = [2, 3] : tensor<2x8x9x3xf32>
// CHECK: %[[D:.*]] = kiln.max_pool2d %{{.*}} layout = nhwc kernel = [2, 2] : tensor<2x8x9x3xf32>
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]] : tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2x7x8x3xf32>
func.func @pools(%x: tensor<2x16x15x15xf32>, %y: tensor<2x8x9x3xf32>)
    -> (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2x7x8x3xf32>) {
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1]
      : tensor<2x16x15x15xf32>
  %1 = kiln.avg_pool2d %x layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1]
      count_include_pad : tensor<2x16x15x15xf32>
  %2 = kiln.avg_pool2d %y layout = nhwc kernel = [2, 3] stride = [2, 3] : tensor<2x8x9x3xf32>
  %3 = kiln.max_pool2d %y layout = nhwc kernel = [2, 2] : tensor<2x8x9x3xf32>
  return %0, %1, %2, %3 : tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2x7x8x3xf32>
}
