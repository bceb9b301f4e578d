// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @element_types(%a: tensor<4x8xf32>, %b: tensor<8x16xbf16>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'bf16'}}
  %0 = kiln.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xbf16>
  return
}

// -----

func.func @rank1(%a: tensor<8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{operands must have rank >= 2, got [8] and [8, 3]}}
  %0 = kiln.matmul %a, %b : tensor<8xf32>, tensor<8x3xf32>
  return
}

// -----

func.func @contraction(%a: tensor<2x4x8xf32>, %b: tensor<2x16x7xf32>) {
  // expected-error @+1 {{contraction dimensions differ: lhs [2, 4, 8] has K = 8 but rhs [2, 16, 7] (transposed) has K = 7}}
  %0 = kiln.matmul %a, %b transpose_rhs : tensor<2x4x8xf32>, tensor<2x16x7xf32>
  return
}

// -----

func.func @contraction_lhs_transposed(%a: tensor<8x4xf16>, %b: tensor<4x16xf16>) {
  // expected-error @+1 {{contraction dimensions differ: lhs [8, 4] (transposed) has K = 8 but rhs [4, 16] has K = 4}}
  %0 = kiln.matmul %a, %b transpose_lhs : tensor<8x4xf16>, tensor<4x16xf16>
  return
}

// -----

func.func @batch(%a: tensor<3x2x4x8xf32>, %b: tensor<5x8x6xf32>) {
  // expected-error @+1 {{batch dimensions: shapes [3, 2] and [5] are not broadcast-compatible: dimension 1 of the broadcast result is 2 vs 5}}
  %0 = kiln.matmul %a, %b : tensor<3x2x4x8xf32>, tensor<5x8x6xf32>
  return
}

// -----

func.func @int_operands(%a: tensor<4x8xi32>, %b: tensor<8x2xi32>) {
  // expected-error @+1 {{'kiln.matmul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %0 = kiln.matmul %a, %b : tensor<4x8xi32>, tensor<8x2xi32>
  return
}

// -----

func.func @wrong_result(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+2 {{'kiln.matmul' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'kiln.matmul' op failed to infer returned types}}
  %0 = "kiln.matmul"(%a, %b) <{transpose_rhs}> : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return
}
