// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op resizes rank 3 [2, 3, 4] to rank 2 [2, 3]: the ranks must match}}
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric scales = [1.0, 1.0, 1.0]
      : tensor<2x3x4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @element_type(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op the result's element type 'bf16' must be the input's, 'f32'}}
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric scales = [1.0, 1.0, 2.0]
      : tensor<2x3x4xf32> -> tensor<2x3x8xbf16>
  return
}

// -----

func.func @scale_count(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op 'scales' must have one value per dim (3), got 2}}
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric scales = [1.0, 2.0]
      : tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @scale_sign(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op 'scales' must be positive and finite, got -2.000000e+00 for dim 2}}
  %0 = kiln.resize %x mode = linear coordinates = half_pixel scales = [1.0, 1.0, -2.0]
      : tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @too_many_dims(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'kiln.resize' op resizes 4 dims [0, 1, 2, 3] of [2, 3, 4, 5] -> [4, 6, 8, 10]; at most 3 can be}}
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric scales = [2.0, 2.0, 2.0, 2.0]
      : tensor<2x3x4x5xf32> -> tensor<4x6x8x10xf32>
  return
}

// -----

func.func @empty_dim(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op resizes dim 2 from 4 to 0 elements; a resized dim needs at least one of each}}
  %0 = kiln.resize %x mode = nearest coordinates = asymmetric scales = [1.0, 1.0, 0.1]
      : tensor<2x3x4xf32> -> tensor<2x3x0xf32>
  return
}

// -----

func.func @linear_rounding(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'kiln.resize' op 'rounding' = floor applies to mode = nearest only}}
  %0 = kiln.resize %x mode = linear coordinates = half_pixel rounding = floor
      scales = [1.0, 1.0, 2.0] : tensor<2x3x4xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @backward(%g: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'kiln.resize_backward' op 'scales' must have one value per dim (3), got 1}}
  %0 = kiln.resize_backward %g mode = nearest coordinates = asymmetric scales = [2.0]
      : tensor<2x3x8xf32> -> tensor<2x3x4xf32>
  return
}
