// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @constant_f64() {
  // expected-error @+1 {{'value' element type must be f32, bf16, f16, i32 or i1, got 'f64'}}
  %0 = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  return
}

// -----

func.func @constant_vector() {
  // expected-error @+1 {{'value' must be a statically shaped tensor, got 'vector<2x3xf32>'}}
  %0 = kiln.constant dense<1.0> : vector<2x3xf32>
  return
}

// -----

func.func @constant_wrong_result() {
  // expected-error @+2 {{'kiln.constant' op inferred type(s) 'tensor<3x2xi32>' are incompatible with return type(s) of operation 'tensor<2x3xi32>'}}
  // expected-error @+1 {{'kiln.constant' op failed to infer returned types}}
  %0 = "kiln.constant"() <{value = dense<7> : tensor<3x2xi32>}> : () -> tensor<2x3xi32>
  return
}

// -----

func.func @iota_dim_too_large() {
  // expected-error @+1 {{'kiln.iota' op 'dim' must be in [0, 3) for a result of rank 3, got 3}}
  %0 = kiln.iota dim = 3 : tensor<2x5x7xi32>
  return
}

// -----

func.func @iota_dim_negative() {
  // expected-error @+1 {{'kiln.iota' op 'dim' must be in [0, 2) for a result of rank 2, got -1}}
  %0 = kiln.iota dim = -1 : tensor<6x3xf32>
  return
}

// -----

func.func @iota_rank0() {
  // expected-error @+1 {{'kiln.iota' op 'dim' must be in [0, 0) for a result of rank 0, got 0}}
  %0 = kiln.iota dim = 0 : tensor<bf16>
  return
}

// -----

func.func @iota_mask() {
  // expected-error @+1 {{'kiln.iota' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<4x8xi1>'}}
  %0 = kiln.iota dim = 1 : tensor<4x8xi1>
  return
}

// -----

func.func @uniform_low_not_below_high() {
  // expected-error @+1 {{'kiln.random_uniform' op 'low' must be less than 'high', got low = 1.5 and high = 1.5}}
  %0 = kiln.random_uniform seed = 3 stream = 1 low = 1.5 high = 1.5 : tensor<3x5xf32>
  return
}

// -----

func.func @uniform_default_high(%step: tensor<i32>) {
  // expected-error @+1 {{'kiln.random_uniform' op 'low' must be less than 'high', got low = 2 and high = 1}}
  %0 = kiln.random_uniform seed = 3 stream = 1 offset = %step low = 2.0 : tensor<3x5xbf16>
  return
}

// -----

func.func @normal_negative_std() {
  // expected-error @+1 {{'kiln.random_normal' op 'std' must be non-negative, got -0.25}}
  %0 = kiln.random_normal seed = 11 stream = 2 mean = 1.0 std = -0.25 : tensor<7x2xf16>
  return
}

// -----

func.func @normal_stream_negative() {
  // expected-error @+1 {{'kiln.random_normal' op 'stream' must be in [0, 2^32), got -1}}
  %0 = kiln.random_normal seed = 11 stream = -1 : tensor<7x2xf32>
  return
}

// -----

func.func @uniform_stream_too_large() {
  // expected-error @+1 {{'kiln.random_uniform' op 'stream' must be in [0, 2^32), got 4294967296}}
  %0 = kiln.random_uniform seed = 11 stream = 4294967296 : tensor<9xf32>
  return
}

// -----

func.func @uniform_too_many_elements() {
  // expected-error @+1 {{'kiln.random_uniform' op result has 17179869188 elements, more than the 2^34 the 32-bit block counter (i / 4) can address}}
  %0 = kiln.random_uniform seed = 5 stream = 0 : tensor<4294967297x4xbf16>
  return
}

// -----

func.func @normal_integer_result() {
  // expected-error @+1 {{'kiln.random_normal' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %0 = kiln.random_normal seed = 5 stream = 0 : tensor<4x8xi32>
  return
}

// -----

// The offset's type is implied (tensor<i32>), so another type clashes.
// expected-note @+1 {{prior use here}}
func.func @uniform_offset_not_scalar(%step: tensor<1xi32>) {
  // expected-error @+1 {{use of value '%step' expects different type than prior uses: 'tensor<i32>' vs 'tensor<1xi32>'}}
  %0 = kiln.random_uniform seed = 5 stream = 0 offset = %step : tensor<4x8xf32>
  return
}

// -----

func.func @uniform_offset_generic(%step: tensor<2xi32>) {
  // expected-error @+1 {{'kiln.random_uniform' op operand #0 must be 0D tensor of 32-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = "kiln.random_uniform"(%step) <{seed = 5 : i64, stream = 0 : i64, low = 0.0 : f64, high = 1.0 : f64}> : (tensor<2xi32>) -> tensor<4x8xf32>
  return
}
