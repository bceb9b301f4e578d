// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @layer_norm_rank0(%x: tensor<f32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'input' must have rank >= 1, got a rank-0 tensor}}
  %0 = kiln.layer_norm %x : tensor<f32>
  return
}

// -----

func.func @layer_norm_too_many_dims(%x: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'num_normalized_dims' must be in [1, 3] for an input of rank 3, got 4}}
  %0 = kiln.layer_norm %x dims = 4 : tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_zero_dims(%x: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'num_normalized_dims' must be in [1, 3] for an input of rank 3, got 0}}
  %0 = kiln.layer_norm %x dims = 0 : tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_eps(%x: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'eps' must be positive, got 0.000000e+00}}
  %0 = kiln.layer_norm %x eps = 0.0 : tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_weight_shape(%x: tensor<2x7x4x6xf32>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'weight' must have shape [4, 6] (the normalized dims of 'input'), got [6]}}
  %0 = kiln.layer_norm %x, %w dims = 2 : tensor<2x7x4x6xf32>, tensor<6xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x7x6xf32>, %w: tensor<6xf32>, %b: tensor<7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'bias' must have shape [6] (the normalized dims of 'input'), got [7, 6]}}
  %0 = kiln.layer_norm %x, %w, %b : tensor<2x7x6xf32>, tensor<6xf32>, tensor<7x6xf32>
  return
}

// -----

func.func @layer_norm_weight_dtype(%x: tensor<2x7x6xbf16>, %w: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'weight' must have element type 'bf16' like 'input', got 'f32'}}
  %0 = kiln.layer_norm %x, %w : tensor<2x7x6xbf16>, tensor<6xf32>
  return
}

// -----

func.func @layer_norm_bias_without_weight(%x: tensor<2x7x6xf32>, %b: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op 'bias' requires 'weight' (pass a tensor of ones for a pure shift)}}
  %0 = "kiln.layer_norm"(%x, %b) <{eps = 1.0e-05 : f64, num_normalized_dims = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 1>}>
      : (tensor<2x7x6xf32>, tensor<6xf32>) -> tensor<2x7x6xf32>
  return
}

// -----

func.func @layer_norm_integer(%x: tensor<2x7x6xi32>) {
  // expected-error @+1 {{'kiln.layer_norm' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x7x6xi32>'}}
  %0 = kiln.layer_norm %x : tensor<2x7x6xi32>
  return
}

// -----

func.func @layer_norm_wrong_result(%x: tensor<2x7x6xf32>) {
  // expected-error @+1 {{'kiln.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = "kiln.layer_norm"(%x) <{eps = 1.0e-05 : f64, num_normalized_dims = 1 : i64, operandSegmentSizes = array<i32: 1, 0, 0>}>
      : (tensor<2x7x6xf32>) -> tensor<2x7xf32>
  return
}

// -----

func.func @rms_norm_rank0(%x: tensor<bf16>) {
  // expected-error @+1 {{'kiln.rms_norm' op 'input' must have rank >= 1, got a rank-0 tensor}}
  %0 = kiln.rms_norm %x : tensor<bf16>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<2x9x64xbf16>) {
  // expected-error @+1 {{'kiln.rms_norm' op 'eps' must be positive, got -1.000000e-05}}
  %0 = kiln.rms_norm %x eps = -1.0e-05 : tensor<2x9x64xbf16>
  return
}

// -----

func.func @rms_norm_weight_shape(%x: tensor<2x9x64xbf16>, %w: tensor<9x64xbf16>) {
  // expected-error @+1 {{'kiln.rms_norm' op 'weight' must have shape [64] (the last dim of 'input'), got [9, 64]}}
  %0 = kiln.rms_norm %x, %w : tensor<2x9x64xbf16>, tensor<9x64xbf16>
  return
}

// -----

func.func @rms_norm_weight_dtype(%x: tensor<2x9x64xbf16>, %w: tensor<64xf16>) {
  // expected-error @+1 {{'kiln.rms_norm' op 'weight' must have element type 'bf16' like 'input', got 'f16'}}
  %0 = kiln.rms_norm %x, %w : tensor<2x9x64xbf16>, tensor<64xf16>
  return
}

// -----

func.func @batch_norm_rank1(%x: tensor<16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'input' must have rank >= 2 ([N, C, ...]), got rank 1}}
  %y:3 = kiln.batch_norm %x, %g, %g dim = 0 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_dim(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'dim' must be in [0, 4) for an input of rank 4, got 4}}
  %y:3 = kiln.batch_norm %x, %g, %g dim = 4 : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_eps(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'eps' must be positive, got -1.000000e+00}}
  %y:3 = kiln.batch_norm %x, %g, %g eps = -1.0 : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_gamma_nhwc(%x: tensor<8x5x5x16xf32>, %g: tensor<5xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'gamma' must have shape [16] (the channel dim 3 of 'input'), got [5]}}
  %y:3 = kiln.batch_norm %x, %g, %b dim = 3 : tensor<8x5x5x16xf32>, tensor<5xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_beta_dtype(%x: tensor<8x16x5x5xf16>, %g: tensor<16xf16>, %b: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'beta' must have element type 'f16' like 'input', got 'f32'}}
  %y:3 = kiln.batch_norm %x, %g, %b : tensor<8x16x5x5xf16>, tensor<16xf16>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_wrong_result(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+2 {{'kiln.batch_norm' op inferred type(s) 'tensor<8x16x5x5xf32>', 'tensor<16xf32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<8x16x5x5xf32>', 'tensor<8xf32>', 'tensor<16xf32>'}}
  // expected-error @+1 {{'kiln.batch_norm' op failed to infer returned types}}
  %y:3 = "kiln.batch_norm"(%x, %g, %g) <{dim = 1 : i64, eps = 1.0e-05 : f64}>
      : (tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x5x5xf32>, tensor<8xf32>, tensor<16xf32>)
  return
}

// -----

// A channel dim past the input's rank, in the generic form (which the
// custom syntax's type inference does not see first).
func.func @batch_norm_dim_past_rank(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'dim' must be in [0, 4) for an input of rank 4, got 2143289344}}
  %y:3 = "kiln.batch_norm"(%x, %g, %g) <{dim = 2143289344 : i64, eps = 1.0e-05 : f64}>
      : (tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_one_running(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'running' takes two operands (the running mean and the running variance), got 1}}
  %y:4 = kiln.batch_norm %x, %g, %g running %g : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_running_shape(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>, %r: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'running mean' must have shape [16] (the channel dim 1 of 'input'), got [5]}}
  %y:5 = kiln.batch_norm %x, %g, %g running %r, %g : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>, tensor<5xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_running_types(%x: tensor<8x16x5x5xbf16>, %g: tensor<16xbf16>, %rm: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'running variance' must have element type 'f32' like 'running mean', got 'bf16'}}
  %y:5 = kiln.batch_norm %x, %g, %g running %rm, %g : tensor<8x16x5x5xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xbf16>
  return
}

// -----

func.func @batch_norm_momentum_without_running(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'momentum' updates running statistics: it needs 'running %mean, %var'}}
  %y:3 = kiln.batch_norm %x, %g, %g momentum = 0.1 : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_eval_without_running(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'eval' normalises with running statistics: it needs 'running %mean, %var'}}
  %y:3 = kiln.batch_norm %x, %g, %g eval : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_momentum_range(%x: tensor<8x16x5x5xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op 'momentum' must be in [0, 1], got 1.5}}
  %y:5 = kiln.batch_norm %x, %g, %g running %g, %g momentum = 1.5 : tensor<8x16x5x5xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_one_value_per_channel(%x: tensor<1x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{'kiln.batch_norm' op updating running statistics needs more than one value per channel (the unbiased variance divides by n - 1), got 1}}
  %y:5 = kiln.batch_norm %x, %g, %g running %g, %g : tensor<1x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
  return
}

// -----

func.func @batch_norm_running_result_type(%x: tensor<8x16xbf16>, %g: tensor<16xbf16>, %r: tensor<16xf32>) {
  // expected-error @+2 {{'kiln.batch_norm' op inferred type(s) 'tensor<8x16xbf16>', 'tensor<16xbf16>', 'tensor<16xbf16>', 'tensor<16xf32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<8x16xbf16>', 'tensor<16xbf16>', 'tensor<16xbf16>', 'tensor<16xbf16>', 'tensor<16xbf16>'}}
  // expected-error @+1 {{'kiln.batch_norm' op failed to infer returned types}}
  %y:5 = "kiln.batch_norm"(%x, %g, %g, %r, %r) <{dim = 1 : i64, eps = 1.0e-05 : f64}>
      : (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xbf16>, tensor<16xbf16>)
  return
}

// -----

// expected-error @+1 {{argument 0 is marked both 'kiln.param' and 'kiln.state': state is not trained}}
func.func @param_and_state(%r: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.state = #kiln.init<zeros>}) {
  return
}

// -----

// expected-error @+1 {{'kiln.state' must be an initialiser such as #kiln.init<zeros>, got 1.000000e+00 : f32}}
func.func @state_not_init(%r: tensor<16xf32> {kiln.state = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'kiln.state' marks an argument of type 'tensor<16xi32>'; state tensors must be static float tensors}}
func.func @state_int(%r: tensor<16xi32> {kiln.state = #kiln.init<zeros>}) {
  return
}
