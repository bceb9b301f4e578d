// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @table_rank(%t: tensor<10x4x8xf32>, %i: tensor<5xi32>) {
  // expected-error @+1 {{'table' must have rank 2 ([V, D]), got [10, 4, 8]}}
  %0 = kiln.embedding %t, %i : tensor<10x4x8xf32>, tensor<5xi32>
  return
}

// -----

func.func @float_indices(%t: tensor<10x8xf32>, %i: tensor<5xf32>) {
  // expected-error @+1 {{'kiln.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<5xf32>'}}
  %0 = kiln.embedding %t, %i : tensor<10x8xf32>, tensor<5xf32>
  return
}

// -----

func.func @embedding_wrong_result(%t: tensor<10x8xf32>, %i: tensor<5x3xi32>) {
  // expected-error @+2 {{'kiln.embedding' op inferred type(s) 'tensor<5x3x8xf32>' are incompatible with return type(s) of operation 'tensor<5x3x10xf32>'}}
  // expected-error @+1 {{'kiln.embedding' op failed to infer returned types}}
  %0 = "kiln.embedding"(%t, %i) : (tensor<10x8xf32>, tensor<5x3xi32>) -> tensor<5x3x10xf32>
  return
}

// -----

func.func @rope_rank(%x: tensor<16x4x64xf32>) {
  // expected-error @+1 {{'kiln.rope' op 'input' must have rank 4 ([B, T, H, D]), got [16, 4, 64]}}
  %0 = kiln.rope %x : tensor<16x4x64xf32>
  return
}

// -----

func.func @rope_odd(%x: tensor<2x16x4x7xf32>) {
  // expected-error @+1 {{'kiln.rope' op head dim D (dim 3 of 'input') must be even, got 7}}
  %0 = kiln.rope %x : tensor<2x16x4x7xf32>
  return
}

// -----

func.func @rope_theta(%x: tensor<2x16x4x8xf32>) {
  // expected-error @+1 {{'kiln.rope' op 'theta' must be positive, got 0.000000e+00}}
  %0 = kiln.rope %x theta = 0.0 : tensor<2x16x4x8xf32>
  return
}

// -----

func.func @rope_offset(%x: tensor<2x16x4x8xf32>) {
  // expected-error @+1 {{'kiln.rope' op 'position_offset' must be non-negative, got -3}}
  %0 = kiln.rope %x position_offset = -3 : tensor<2x16x4x8xf32>
  return
}

// -----

func.func @rope_integer(%x: tensor<2x16x4x8xi32>) {
  // expected-error @+1 {{'kiln.rope' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x16x4x8xi32>'}}
  %0 = kiln.rope %x : tensor<2x16x4x8xi32>
  return
}
