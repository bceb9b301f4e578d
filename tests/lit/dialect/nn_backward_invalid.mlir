// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @layer_norm_backward_rank0(%g: tensor<f32>) {
  // expected-error @+1 {{'input' must have rank >= 1, got a rank-0 tensor}}
  %0:3 = kiln.layer_norm_backward %g, %g : tensor<f32>
  return
}

// -----

func.func @layer_norm_backward_dims(%g: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'num_normalized_dims' must be in [1, 3] for an input of rank 3, got 4}}
  %0:3 = kiln.layer_norm_backward %g, %g dims = 4 : tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_backward_eps(%g: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm_backward' op 'eps' must be positive, got -1.000000e-05}}
  %0:3 = kiln.layer_norm_backward %g, %g eps = -1.0e-05 : tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_backward_weight_shape(%g: tensor<2x7x4x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm_backward' op 'weight' must have shape [4, 6] (the normalized dims of 'input'), got [6]}}
  %0:3 = kiln.layer_norm_backward %g, %g, %w dims = 2 : tensor<2x7x4x6xf32>, tensor<6xf32>
  return
}

// -----

func.func @layer_norm_backward_weight_dtype(%g: tensor<2x7x6xbf16>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm_backward' op 'weight' must have element type 'bf16' like 'input', got 'f32'}}
  %0:3 = kiln.layer_norm_backward %g, %g, %w : tensor<2x7x6xbf16>, tensor<6xf32>
  return
}

// -----

func.func @layer_norm_backward_grad_type(%g: tensor<2x7x6xf32>, %x: tensor<2x7x5xf32>) {
  // expected-error @+1 {{'kiln.layer_norm_backward' op failed to verify that all of {grad, input} have same type}}
  %0:3 = "kiln.layer_norm_backward"(%g, %x) {operandSegmentSizes = array<i32: 1, 1, 0>}
      : (tensor<2x7x6xf32>, tensor<2x7x5xf32>) -> (tensor<2x7x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return
}

// -----

func.func @layer_norm_backward_integer(%g: tensor<2x7x6xi32>) {
  // expected-error @+1 {{'kiln.layer_norm_backward' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x7x6xi32>'}}
  %0:3 = kiln.layer_norm_backward %g, %g : tensor<2x7x6xi32>
  return
}

// -----

func.func @layer_norm_backward_wrong_result(%g: tensor<2x7x6xf32>) {
  // expected-error @+2 {{'kiln.layer_norm_backward' op inferred type(s) 'tensor<2x7x6xf32>', 'tensor<6xf32>', 'tensor<6xf32>' are incompatible with return type(s) of operation 'tensor<2x7x6xf32>', 'tensor<7x6xf32>', 'tensor<6xf32>'}}
  // expected-error @+1 {{'kiln.layer_norm_backward' op failed to infer returned types}}
  %0:3 = "kiln.layer_norm_backward"(%g, %g) {operandSegmentSizes = array<i32: 1, 1, 0>}
      : (tensor<2x7x6xf32>, tensor<2x7x6xf32>) -> (tensor<2x7x6xf32>, tensor<7x6xf32>, tensor<6xf32>)
  return
}

// -----

func.func @rms_norm_backward_rank0(%g: tensor<bf16>) {
  // expected-error @+1 {{'input' must have rank >= 1, got a rank-0 tensor}}
  %0:2 = kiln.rms_norm_backward %g, %g : tensor<bf16>
  return
}

// -----

func.func @rms_norm_backward_eps(%g: tensor<3x8xf32>) {
  // expected-error @+1 {{'kiln.rms_norm_backward' op 'eps' must be positive, got 0.000000e+00}}
  %0:2 = kiln.rms_norm_backward %g, %g eps = 0.0 : tensor<3x8xf32>
  return
}

// -----

func.func @rms_norm_backward_weight(%g: tensor<3x5x8xf32>, %w: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.rms_norm_backward' op 'weight' must have shape [8] (the last dim of 'input'), got [5]}}
  %0:2 = kiln.rms_norm_backward %g, %g, %w : tensor<3x5x8xf32>, tensor<5xf32>
  return
}

// -----

func.func @batch_norm_backward_rank(%g: tensor<9xf32>, %gamma: tensor<9xf32>) {
  // expected-error @+1 {{'input' must have rank >= 2 ([N, C, ...]), got rank 1}}
  %0:3 = kiln.batch_norm_backward %g, %g, %gamma : tensor<9xf32>, tensor<9xf32>
  return
}

// -----

func.func @batch_norm_backward_dim(%g: tensor<4x3x5xf32>, %gamma: tensor<3xf32>) {
  // expected-error @+1 {{'dim' must be in [0, 3) for an input of rank 3, got 3}}
  %0:3 = kiln.batch_norm_backward %g, %g, %gamma dim = 3 : tensor<4x3x5xf32>, tensor<3xf32>
  return
}

// -----

// The same in the generic form, which the custom syntax's type inference
// does not see first.
func.func @batch_norm_backward_dim_generic(%g: tensor<4x3x5xf32>, %gamma: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.batch_norm_backward' op 'dim' must be in [0, 3) for an input of rank 3, got 9}}
  %0:3 = "kiln.batch_norm_backward"(%g, %g, %gamma) <{dim = 9 : i64, eps = 1.0e-05 : f64}>
      : (tensor<4x3x5xf32>, tensor<4x3x5xf32>, tensor<3xf32>) -> (tensor<4x3x5xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_backward_eps(%g: tensor<4x3x5xf32>, %gamma: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.batch_norm_backward' op 'eps' must be positive, got -1.000000e+00}}
  %0:3 = kiln.batch_norm_backward %g, %g, %gamma eps = -1.0 : tensor<4x3x5xf32>, tensor<3xf32>
  return
}

// -----

func.func @batch_norm_backward_gamma(%g: tensor<8x5x5x16xf32>, %gamma: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.batch_norm_backward' op 'gamma' must have shape [16] (the channel dim 3 of 'input'), got [5]}}
  %0:3 = kiln.batch_norm_backward %g, %g, %gamma dim = 3 : tensor<8x5x5x16xf32>, tensor<5xf32>
  return
}

// -----

func.func @batch_norm_backward_gamma_dtype(%g: tensor<8x5xf16>, %gamma: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.batch_norm_backward' op 'gamma' must have element type 'f16' like 'input', got 'f32'}}
  %0:3 = kiln.batch_norm_backward %g, %g, %gamma : tensor<8x5xf16>, tensor<5xf32>
  return
}

// -----

func.func @conv_backward_input_rank(%g: tensor<2x8x9xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op 'grad' must have rank 4 ([N, C, H, W]), got [2, 8, 9]}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw
      : tensor<2x8x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x11x11xf32>
  return
}

// -----

func.func @conv_backward_filter_rank(%g: tensor<2x9x9x8xf32>, %x: tensor<2x11x11x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_filter' op 'result' must have rank 4 ([O, KH, KW, C/groups]), got [8, 3, 3]}}
  %0 = kiln.conv2d_backward_filter %g, %x layout = nhwc
      : tensor<2x9x9x8xf32>, tensor<2x11x11x3xf32> -> tensor<8x3x3xf32>
  return
}

// -----

func.func @conv_backward_input_dtype(%g: tensor<2x8x9x9xf32>, %w: tensor<8x3x3x3xbf16>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op 'filter' must have element type 'f32' like 'grad', got 'bf16'}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw
      : tensor<2x8x9x9xf32>, tensor<8x3x3x3xbf16> -> tensor<2x3x11x11xf32>
  return
}

// -----

func.func @conv_backward_stride_count(%g: tensor<2x8x9x9xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op 'stride' must have 2 values, got [1]}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw stride = [1]
      : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x11x11xf32>
  return
}

// -----

func.func @conv_backward_dilation(%g: tensor<2x8x9x9xf32>, %x: tensor<2x3x11x11xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_filter' op 'dilation' values must be positive, got [0, 1]}}
  %0 = kiln.conv2d_backward_filter %g, %x layout = nchw dilation = [0, 1]
      : tensor<2x8x9x9xf32>, tensor<2x3x11x11xf32> -> tensor<8x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_padding(%g: tensor<2x8x9x9xf32>, %x: tensor<2x3x11x11xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_filter' op 'padding' values must be non-negative, got [0, -1, 0, 0]}}
  %0 = kiln.conv2d_backward_filter %g, %x layout = nchw padding = [0, -1, 0, 0]
      : tensor<2x8x9x9xf32>, tensor<2x3x11x11xf32> -> tensor<8x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_groups(%g: tensor<2x8x9x9xf32>, %x: tensor<2x3x11x11xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_filter' op 'groups' must be positive, got 0}}
  %0 = kiln.conv2d_backward_filter %g, %x layout = nchw groups = 0
      : tensor<2x8x9x9xf32>, tensor<2x3x11x11xf32> -> tensor<8x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_input_channels(%g: tensor<2x8x9x9xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op input channels 5 must be divisible by 'groups' = 2}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw groups = 2
      : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x5x11x11xf32>
  return
}

// -----

func.func @conv_backward_output_channels(%g: tensor<2x9x9x7xf32>, %x: tensor<2x11x11x6xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_filter' op output channels 7 (dim 0 of 'result') must be divisible by 'groups' = 2}}
  %0 = kiln.conv2d_backward_filter %g, %x layout = nhwc groups = 2
      : tensor<2x9x9x7xf32>, tensor<2x11x11x6xf32> -> tensor<7x3x3x3xf32>
  return
}

// -----

func.func @conv_backward_filter_channels(%g: tensor<2x8x9x9xf32>, %w: tensor<8x6x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op 'filter' [8, 6, 3, 3] must have 3 channels (C/groups, dim 1) for 'result' [2, 6, 11, 11] and 'groups' = 2}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw groups = 2
      : tensor<2x8x9x9xf32>, tensor<8x6x3x3xf32> -> tensor<2x6x11x11xf32>
  return
}

// -----

func.func @conv_backward_empty(%g: tensor<2x8x1x1xf32>, %w: tensor<8x3x5x5xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op the window does not fit the padded 'result' [2, 3, 4, 4]: the forward conv2d result would be empty}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw
      : tensor<2x8x1x1xf32>, tensor<8x3x5x5xf32> -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @conv_backward_grad_shape(%g: tensor<2x8x9x9xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv2d_backward_input' op 'grad' must have shape [2, 8, 5, 5] (the conv2d result for 'result' [2, 3, 11, 11]), got [2, 8, 9, 9]}}
  %0 = kiln.conv2d_backward_input %g, %w layout = nchw stride = [2, 2]
      : tensor<2x8x9x9xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x11x11xf32>
  return
}

// -----

func.func @max_pool_backward_shape(%g: tensor<2x16x7x7xf32>, %x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kiln.max_pool2d_backward' op 'grad' must have shape [2, 16, 8, 8] (the pooling result for 'input' [2, 16, 15, 15]), got [2, 16, 7, 7]}}
  %0 = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [3, 3] stride = [2, 2]
      padding = [1, 1, 1, 1] : tensor<2x16x7x7xf32>, tensor<2x16x15x15xf32>
  return
}

// -----

func.func @max_pool_backward_padding(%g: tensor<2x16x8x9xf32>, %x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kiln.max_pool2d_backward' op 'padding' right = 2 must be at most half the kernel width 3 (1)}}
  %0 = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [3, 3] stride = [2, 2]
      padding = [1, 1, 1, 2] : tensor<2x16x8x9xf32>, tensor<2x16x15x15xf32>
  return
}

// -----

func.func @max_pool_backward_kernel(%g: tensor<2x16x8x8xf32>, %x: tensor<2x16x15x15xf32>) {
  // expected-error @+1 {{'kiln.max_pool2d_backward' op 'kernel' must have 2 values, got [3, 3, 3]}}
  %0 = kiln.max_pool2d_backward %g, %x layout = nchw kernel = [3, 3, 3]
      : tensor<2x16x8x8xf32>, tensor<2x16x15x15xf32>
  return
}

// -----

func.func @max_pool_backward_dtype(%g: tensor<2x13x13x4xf32>, %x: tensor<2x15x15x4xbf16>) {
  // expected-error @+1 {{'kiln.max_pool2d_backward' op 'input' must have element type 'f32' like 'grad', got 'bf16'}}
  %0 = kiln.max_pool2d_backward %g, %x layout = nhwc kernel = [3, 3]
      : tensor<2x13x13x4xf32>, tensor<2x15x15x4xbf16>
  return
}

// -----

func.func @avg_pool_backward_shape(%g: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'kiln.avg_pool2d_backward' op 'grad' must have shape [2, 5, 4, 3] (the pooling result for 'result' [2, 10, 9, 3]), got [2, 4, 4, 3]}}
  %0 = kiln.avg_pool2d_backward %g layout = nhwc kernel = [2, 2] stride = [2, 2]
      : tensor<2x4x4x3xf32> -> tensor<2x10x9x3xf32>
  return
}

// -----

func.func @avg_pool_backward_rank(%g: tensor<2x4x4x3xf32>) {
  // expected-error @+1 {{'kiln.avg_pool2d_backward' op 'result' must have rank 4 ([N, H, W, C]), got [8, 8, 3]}}
  %0 = kiln.avg_pool2d_backward %g layout = nhwc kernel = [2, 2] stride = [2, 2]
      : tensor<2x4x4x3xf32> -> tensor<8x8x3xf32>
  return
}

// -----

func.func @embedding_backward_rank(%g: tensor<4x32x64xf32>, %i: tensor<4x32xi32>) {
  // expected-error @+1 {{'kiln.embedding_backward' op 'result' must have rank 2 ([V, D]), got [10, 8, 64]}}
  %0 = kiln.embedding_backward %g, %i : tensor<4x32x64xf32>, tensor<4x32xi32> -> tensor<10x8x64xf32>
  return
}

// -----

func.func @embedding_backward_grad(%g: tensor<4x32x64xf32>, %i: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.embedding_backward' op 'grad' must have shape [32, 64] (the shape of 'indices' + [D]), got [4, 32, 64]}}
  %0 = kiln.embedding_backward %g, %i : tensor<4x32x64xf32>, tensor<32xi32> -> tensor<100x64xf32>
  return
}

// -----

func.func @embedding_backward_dtype(%g: tensor<32x64xf32>, %i: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.embedding_backward' op 'result' must have element type 'f32' like 'grad', got 'bf16'}}
  %0 = kiln.embedding_backward %g, %i : tensor<32x64xf32>, tensor<32xi32> -> tensor<100x64xbf16>
  return
}

// -----

func.func @embedding_backward_float_indices(%g: tensor<32x64xf32>, %i: tensor<32xf32>) {
  // expected-error @+1 {{'kiln.embedding_backward' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<32xf32>'}}
  %0 = kiln.embedding_backward %g, %i : tensor<32x64xf32>, tensor<32xf32> -> tensor<100x64xf32>
  return
}

// -----

func.func @cross_entropy_backward_rank(%l: tensor<f32>, %x: tensor<2x32x10xf32>, %y: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy_backward' op 'logits' must have rank 2 ([N, C]), got [2, 32, 10]}}
  %0 = kiln.cross_entropy_backward %l, %x, %y : tensor<2x32x10xf32>, tensor<2xi32>
  return
}

// -----

func.func @cross_entropy_backward_labels(%l: tensor<f32>, %x: tensor<32x10xf32>, %y: tensor<10xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy_backward' op 'labels' must have shape [32] (N of 'logits'), got [10]}}
  %0 = kiln.cross_entropy_backward %l, %x, %y : tensor<32x10xf32>, tensor<10xi32>
  return
}

// -----

func.func @cross_entropy_backward_smoothing(%l: tensor<f32>, %x: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy_backward' op 'label_smoothing' must be in [0, 1], got 1.500000e+00}}
  %0 = kiln.cross_entropy_backward %l, %x, %y label_smoothing = 1.5 : tensor<32x10xf32>, tensor<32xi32>
  return
}

// -----

func.func @cross_entropy_backward_ignore_index(%l: tensor<f32>, %x: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy_backward' op 'ignore_index' must be an i32 value like the labels, got -2147483649}}
  %0 = kiln.cross_entropy_backward %l, %x, %y ignore_index = -2147483649 : tensor<32x10xf32>, tensor<32xi32>
  return
}

// -----

func.func @cross_entropy_backward_grad(%l: tensor<1xf32>, %x: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy_backward' op failed to verify that 'grad' is a rank-0 tensor of the element type of 'logits'}}
  %0 = "kiln.cross_entropy_backward"(%l, %x, %y)
      : (tensor<1xf32>, tensor<32x10xf32>, tensor<32xi32>) -> tensor<32x10xf32>
  return
}

// -----

func.func @binary_cross_entropy_backward_grad(%l: tensor<bf16>, %x: tensor<32x1xf32>) {
  // expected-error @+1 {{'kiln.binary_cross_entropy_backward' op failed to verify that 'grad' is a rank-0 tensor of the element type of 'logits'}}
  %0 = "kiln.binary_cross_entropy_backward"(%l, %x, %x)
      : (tensor<bf16>, tensor<32x1xf32>, tensor<32x1xf32>) -> tensor<32x1xf32>
  return
}

// -----

func.func @binary_cross_entropy_backward_target(%l: tensor<f32>, %x: tensor<32x1xf32>, %t: tensor<32xf32>) {
  // expected-error @+1 {{'kiln.binary_cross_entropy_backward' op failed to verify that all of {logits, target, result} have same type}}
  %0 = "kiln.binary_cross_entropy_backward"(%l, %x, %t)
      : (tensor<f32>, tensor<32x1xf32>, tensor<32xf32>) -> tensor<32x1xf32>
  return
}
