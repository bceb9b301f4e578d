// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @input_rank(%x: tensor<6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'input' must have rank 4 ([N, C, H, W]), got [6, 17, 17]}}
  %0 = kiln.conv2d %x, %w layout = nchw : tensor<6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @filter_rank(%x: tensor<2x17x17x6xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{'filter' must have rank 4 ([O, KH, KW, C/groups]), got [8, 3, 3]}}
  %0 = kiln.conv2d %x, %w layout = nhwc : tensor<2x17x17x6xf32>, tensor<8x3x3xf32>
  return
}

// -----

func.func @stride_count(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'stride' must have 2 values, got [2, 2, 2]}}
  %0 = kiln.conv2d %x, %w layout = nchw stride = [2, 2, 2] : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @stride_zero(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'stride' values must be positive, got [0, 2]}}
  %0 = kiln.conv2d %x, %w layout = nchw stride = [0, 2] : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @padding_count(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'padding' must have 4 values, got [1, 1]}}
  %0 = kiln.conv2d %x, %w layout = nchw padding = [1, 1] : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @padding_negative(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'padding' values must be non-negative, got [1, -1, 1, 1]}}
  %0 = kiln.conv2d %x, %w layout = nchw padding = [1, -1, 1, 1] : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @dilation_zero(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'dilation' values must be positive, got [1, 0]}}
  %0 = kiln.conv2d %x, %w layout = nchw dilation = [1, 0] : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @empty_height(%x: tensor<2x6x4x17xf32>, %w: tensor<8x6x7x3xf32>) {
  // expected-error @+1 {{the padded input height 6 (4 + 1 + 1) is smaller than the kernel height 7; the output would be empty}}
  %0 = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 0, 0] : tensor<2x6x4x17xf32>, tensor<8x6x7x3xf32>
  return
}

// -----

func.func @empty_width_dilated(%x: tensor<2x9x9x6xf32>, %w: tensor<8x3x3x6xf32>) {
  // expected-error @+1 {{the padded input width 9 (9 + 0 + 0) is smaller than the dilated kernel width 11 (5 * (3 - 1) + 1); the output would be empty}}
  %0 = kiln.conv2d %x, %w layout = nhwc dilation = [1, 5] : tensor<2x9x9x6xf32>, tensor<8x3x3x6xf32>
  return
}

// -----

func.func @groups_zero(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op 'groups' must be positive, got 0}}
  %0 = kiln.conv2d %x, %w layout = nchw groups = 0 : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @channels_not_divisible(%x: tensor<2x6x17x17xf32>, %w: tensor<8x1x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op input channels 6 must be divisible by 'groups' = 4}}
  %0 = kiln.conv2d %x, %w layout = nchw groups = 4 : tensor<2x6x17x17xf32>, tensor<8x1x3x3xf32>
  return
}

// -----

func.func @out_channels_not_divisible(%x: tensor<2x6x17x17xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op output channels 8 (dim 0 of 'filter') must be divisible by 'groups' = 3}}
  %0 = kiln.conv2d %x, %w layout = nchw groups = 3 : tensor<2x6x17x17xf32>, tensor<8x2x3x3xf32>
  return
}

// -----

func.func @filter_channels_nchw(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op 'filter' must have shape [8, 3, 3, 3] for nchw (O, C/groups, KH, KW), got [8, 6, 3, 3]}}
  %0 = kiln.conv2d %x, %w layout = nchw groups = 2 : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @filter_channels_nhwc(%x: tensor<2x17x17x6xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op 'filter' must have shape [8, 6, 3, 6] for nhwc (O, KH, KW, C/groups), got [8, 6, 3, 3]}}
  %0 = kiln.conv2d %x, %w layout = nhwc : tensor<2x17x17x6xf32>, tensor<8x6x3x3xf32>
  return
}

// -----

func.func @filter_dtype(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xbf16>) {
  // expected-error @+1 {{'kiln.conv2d' op 'filter' must have element type 'f32' like 'input', got 'bf16'}}
  %0 = kiln.conv2d %x, %w layout = nchw : tensor<2x6x17x17xf32>, tensor<8x6x3x3xbf16>
  return
}

// -----

func.func @bias_shape(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op 'bias' must have shape [8] (the output channels), got [6]}}
  %0 = kiln.conv2d %x, %w, %b layout = nchw : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>, tensor<6xf32>
  return
}

// -----

func.func @bias_dtype(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'kiln.conv2d' op 'bias' must have element type 'f32' like 'input', got 'f16'}}
  %0 = kiln.conv2d %x, %w, %b layout = nchw : tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>, tensor<8xf16>
  return
}

// -----

func.func @conv_integer(%x: tensor<2x6x17x17xi32>, %w: tensor<8x6x3x3xi32>) {
  // expected-error @+1 {{'kiln.conv2d' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x6x17x17xi32>'}}
  %0 = kiln.conv2d %x, %w layout = nchw : tensor<2x6x17x17xi32>, tensor<8x6x3x3xi32>
  return
}

// -----

func.func @conv_missing_layout(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d' op requires attribute 'layout'}}
  %0 = "kiln.conv2d"(%x, %w) : (tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>) -> tensor<2x8x15x15xf32>
  return
}

// -----

func.func @conv_wrong_result(%x: tensor<2x6x17x17xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+2 {{'kiln.conv2d' op inferred type(s) 'tensor<2x8x15x15xf32>' are incompatible with return type(s) of operation 'tensor<2x8x17x17xf32>'}}
  // expected-error @+1 {{'kiln.conv2d' op failed to infer returned types}}
  %0 = "kiln.conv2d"(%x, %w) <{layout = #kiln<layout nchw>}> : (tensor<2x6x17x17xf32>, tensor<8x6x3x3xf32>) -> tensor<2x8x17x17xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<16x15x15xf32>) {
  // expected-error @+1 {{'input' must have rank 4 ([N, C, H, W]), got [16, 15, 15]}}
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 3] : tensor<16x15x15xf32>
  return
}

// -----

func.func @pool_kernel_count(%x: tensor<2x15x15x16xf32>) {
  // expected-error @+1 {{'kernel' must have 2 values, got [3]}}
  %0 = kiln.avg_pool2d %x layout = nhwc kernel = [3] : tensor<2x15x15x16xf32>
  return
}

// -----

func.func @pool_kernel_zero(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kernel' values must be positive, got [3, 0]}}
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 0] : tensor<2x16x15x15xf32>
  return
}

// -----

func.func @pool_stride(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'stride' values must be positive, got [-1, 1]}}
  %0 = kiln.avg_pool2d %x layout = nchw kernel = [3, 3] stride = [-1, 1] : tensor<2x16x15x15xf32>
  return
}

// -----

func.func @pool_padding_count(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'padding' must have 4 values, got [1, 1, 1]}}
  %0 = kiln.avg_pool2d %x layout = nchw kernel = [3, 3] padding = [1, 1, 1] : tensor<2x16x15x15xf32>
  return
}

// -----

func.func @pool_padding_too_large(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kiln.max_pool2d' op 'padding' right = 2 must be at most half the kernel width 3 (1)}}
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 3] padding = [1, 1, 1, 2] : tensor<2x16x15x15xf32>
  return
}

// -----

func.func @pool_padding_top(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kiln.avg_pool2d' op 'padding' top = 1 must be at most half the kernel height 1 (0)}}
  %0 = kiln.avg_pool2d %x layout = nchw kernel = [1, 3] padding = [1, 0, 0, 0] : tensor<2x16x15x15xf32>
  return
}

// -----

func.func @pool_empty(%x: tensor<2x16x2x15xf32>) {
  // expected-error @+1 {{the padded input height 2 (2 + 0 + 0) is smaller than the kernel height 3; the output would be empty}}
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 3] : tensor<2x16x2x15xf32>
  return
}

// -----

func.func @pool_integer(%x: tensor<2x16x15x15xi32>) {
  // expected-error @+1 {{'kiln.max_pool2d' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x16x15x15xi32>'}}
  %0 = kiln.max_pool2d %x layout = nchw kernel = [3, 3] : tensor<2x16x15x15xi32>
  return
}

// -----

func.func @pool_wrong_result(%x: tensor<2x16x15x15xf32>) {
  // expected-error @+2 {{'kiln.avg_pool2d' op inferred type(s) 'tensor<2x16x13x13xf32>' are incompatible with return type(s) of operation 'tensor<2x16x15x15xf32>'}}
  // expected-error @+1 {{'kiln.avg_pool2d' op failed to infer returned types}}
  %0 = "kiln.avg_pool2d"(%x) <{layout = #kiln<layout nchw>, kernel = array<i64: 3, 3>}> : (tensor<2x16x15x15xf32>) -> tensor<2x16x15x15xf32>
  return
}
