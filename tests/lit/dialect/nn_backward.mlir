// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @norms
// CHECK: %[[DX:.*]], %[[DW:.*]], %[[DB:.*]] = kiln.layer_norm_backward %{{.*}}, %{{.*}}, %{{.*}} dims = 2 eps = 9.9999999999999995E-7 : tensor<2x7x4x6xf32>, tensor<4x6xf32>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = kiln.layer_norm_backward %{{.*}}, %{{.*}} : tensor<2x7x4x6xf32>
// CHECK: %[[RX:.*]], %[[RW:.*]] = kiln.rms_norm_backward %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-03 : tensor<2x9x64xbf16>, tensor<64xbf16>
// CHECK: %[[BX:.*]], %[[BG:.*]], %[[BB:.*]] = kiln.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}} dim = 3 : tensor<8x5x5x16xf32>, tensor<16xf32>
// CHECK: return %[[DX]], %[[DW]], %[[DB]], %[[RX]], %[[RW]], %[[BX]], %[[BG]], %[[BB]] : tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x9x64xbf16>, tensor<64xbf16>, tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>
func.func @norms(%g: tensor<2x7x4x6xf32>, %x: tensor<2x7x4x6xf32>, %w: tensor<4x6xf32>,
                 %rg: tensor<2x9x64xbf16>, %rx: tensor<2x9x64xbf16>, %rw: tensor<64xbf16>,
                 %bg: tensor<8x5x5x16xf32>, %bx: tensor<8x5x5x16xf32>, %gamma: tensor<16xf32>)
    -> (tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x9x64xbf16>,
        tensor<64xbf16>, tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %dx, %dw, %db = kiln.layer_norm_backward %g, %x, %w dims = 2 eps = 1.0e-06
      : tensor<2x7x4x6xf32>, tensor<4x6xf32>
  %plain:3 = kiln.layer_norm_backward %g, %x : tensor<2x7x4x6xf32>
  %rdx, %rdw = kiln.rms_norm_backward %rg, %rx, %rw eps = 1.0e-03
      : tensor<2x9x64xbf16>, tensor<64xbf16>
  %bdx, %bdg, %bdb = kiln.batch_norm_backward %bg, %bx, %gamma dim = 3
      : tensor<8x5x5x16xf32>, tensor<16xf32>
  return %dx, %dw, %db, %rdx, %rdw, %bdx, %bdg, %bdb
      : tensor<2x7x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<2x9x64xbf16>,
        tensor<64xbf16>, tensor<8x5x5x16xf32>, tensor<16xf32>, tensor<16xf32>
}

// Inferred: the result of a 3-D layer_norm_backward with the default dims = 1.
// CHECK-LABEL: func.func @layer_norm_rank3
// CHECK: %{{.*}}, %[[W:.*]], %{{.*}} = kiln.layer_norm_backward %{{.*}}, %{{.*}} : tensor<3x5x7xf16>
// CHECK: return %[[W]] : tensor<7xf16>
func.func @layer_norm_rank3(%g: tensor<3x5x7xf16>, %x: tensor<3x5x7xf16>) -> tensor<7xf16> {
  %dx, %dw, %db = kiln.layer_norm_backward %g, %x : tensor<3x5x7xf16>
  return %dw : tensor<7xf16>
}

// CHECK-LABEL: func.func @conv
// CHECK: %[[I:.*]] = kiln.conv2d_backward_input %{{.*}}, %{{.*}} layout = nchw stride = [2, 2] padding = [1, 1, 1, 1] groups = 2 : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x6x17x17xf32>
// CHECK: %[[F:.*]] = kiln.conv2d_backward_filter %{{.*}}, %{{.*}} layout = nhwc padding = [0, 1, 2, 0] dilation = [2, 3] : tensor<3x7x11x7xbf16>, tensor<3x10x12x5xbf16> -> tensor<7x3x2x5xbf16>
// CHECK: return %[[I]], %[[F]]
func.func @conv(%g: tensor<2x8x9x9xf32>, %w: tensor<8x3x3x3xf32>,
                %g2: tensor<3x7x11x7xbf16>, %x2: tensor<3x10x12x5xbf16>)
    -> (tensor<2x6x17x17xf32>, tensor<7x3x2x5xbf16>) {
  %dx = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2]
      padding = [1, 1, 1, 1] groups = 2
      : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x6x17x17xf32>
  // OH = 10 + 1 - 2*2 - 1 + 1 = 7, OW = 12 + 2 - 3*1 - 1 + 1 = 11.
  %dw = kiln.conv2d_backward_filter %g2, %x2 layout = nhwc padding = [0, 1, 2, 0]
      dilation = [2, 3] : tensor<3x7x11x7xbf16>, tensor<3x10x12x5xbf16> -> tensor<7x3x2x5xbf16>
  return %dx, %dw : tensor<2x6x17x17xf32>, tensor<7x3x2x5xbf16>
}

// CHECK-LABEL: func.func @pool
// CHECK: %[[M:.*]] = kiln.max_pool2d_backward %{{.*}}, %{{.*}} layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x16x8x8xf32>, tensor<2x16x15x15xf32>
// CHECK: %[[A:.*]] = kiln.avg_pool2d_backward %{{.*}} layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x4x4x3xf32> -> tensor<2x8x9x3xf32>
// CHECK: %[[P:.*]] = kiln.avg_pool2d_backward %{{.*}} layout = nhwc kernel = [3, 3] padding = [1, 1, 1, 1] count_include_pad : tensor<2x8x9x3xf32> -> tensor<2x8x9x3xf32>
// CHECK: return %[[M]], %[[A]], %[[P]] : tensor<2x16x15x15xf32>, tensor<2x8x9x3xf32>, tensor<2x8x9x3xf32>
func.func @pool(%g: tensor<2x16x8x8xf32>, %x: tensor<2x16x15x15xf32>,
                %ga: tensor<2x4x4x3xf32>, %gp: tensor<2x8x9x3xf32>)
    -> (tensor<2x16x15x15xf32>, tensor<2x8x9x3xf32>, tensor<2x8x9x3xf32>) {
  %dm = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [3, 3] stride = [2, 2]
      padding = [1, 1, 1, 1] : tensor<2x16x8x8xf32>, tensor<2x16x15x15xf32>
  %da = kiln.avg_pool2d_backward %ga layout = nhwc kernel = [2, 2] stride = [2, 2]
      : tensor<2x4x4x3xf32> -> tensor<2x8x9x3xf32>
  %dp = kiln.avg_pool2d_backward %gp layout = nhwc kernel = [3, 3] padding = [1, 1, 1, 1]
      count_include_pad : tensor<2x8x9x3xf32> -> tensor<2x8x9x3xf32>
  return %dm, %da, %dp : tensor<2x16x15x15xf32>, tensor<2x8x9x3xf32>, tensor<2x8x9x3xf32>
}

// CHECK-LABEL: func.func @embedding_and_losses
// CHECK: %[[E:.*]] = kiln.embedding_backward %{{.*}}, %{{.*}} : tensor<4x32x64xf32>, tensor<4x32xi32> -> tensor<1000x64xf32>
// CHECK: %[[C:.*]] = kiln.cross_entropy_backward %{{.*}}, %{{.*}}, %{{.*}} label_smoothing = 1.000000e-01 : tensor<32x10xf32>, tensor<32xi32>
// CHECK: %[[S:.*]] = kiln.cross_entropy_backward %{{.*}}, %{{.*}}, %{{.*}} reduction = sum ignore_index = -1 : tensor<32x10xf32>, tensor<32xi32>
// CHECK: %[[B:.*]] = kiln.binary_cross_entropy_backward %{{.*}}, %{{.*}}, %{{.*}} reduction = sum : tensor<32x1xbf16>
// CHECK: return %[[E]], %[[C]], %[[S]], %[[B]] : tensor<1000x64xf32>, tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xbf16>
func.func @embedding_and_losses(%g: tensor<4x32x64xf32>, %tokens: tensor<4x32xi32>,
                                %l: tensor<f32>, %logits: tensor<32x10xf32>,
                                %labels: tensor<32xi32>, %lb: tensor<bf16>,
                                %x: tensor<32x1xbf16>, %t: tensor<32x1xbf16>)
    -> (tensor<1000x64xf32>, tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xbf16>) {
  %dt = kiln.embedding_backward %g, %tokens
      : tensor<4x32x64xf32>, tensor<4x32xi32> -> tensor<1000x64xf32>
  %dl = kiln.cross_entropy_backward %l, %logits, %labels label_smoothing = 1.000000e-01
      : tensor<32x10xf32>, tensor<32xi32>
  %ds = kiln.cross_entropy_backward %l, %logits, %labels reduction = sum ignore_index = -1
      : tensor<32x10xf32>, tensor<32xi32>
  %db = kiln.binary_cross_entropy_backward %lb, %x, %t reduction = sum : tensor<32x1xbf16>
  return %dt, %dl, %ds, %db : tensor<1000x64xf32>, tensor<32x10xf32>, tensor<32x10xf32>, tensor<32x1xbf16>
}
