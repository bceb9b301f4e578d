// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @no_inputs() {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{'kiln.concat' op failed to infer returned types}}
  %0 = "kiln.concat"() <{dim = 0 : i64}> : () -> tensor<2xf32>
  return
}

// -----

func.func @dim_out_of_range(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'dim' 2 is out of range for rank 2 (expected 0 <= dim < 2)}}
  %0 = kiln.concat %a, %b dim = 2 : tensor<2x3xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @dim_negative(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'dim' -1 is out of range for rank 2 (expected 0 <= dim < 2)}}
  %0 = kiln.concat %a dim = -1 : tensor<2x3xf32>
  return
}

// -----

func.func @element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xbf16>) {
  // expected-error @+1 {{input 2 has element type 'bf16' but input 0 has 'f32'}}
  %0 = kiln.concat %a, %b, %c dim = 0 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xbf16>
  return
}

// -----

func.func @ranks(%a: tensor<2x3xi32>, %b: tensor<2x3x1xi32>) {
  // expected-error @+1 {{input 1 has rank 3 (shape [2, 3, 1]) but input 0 has rank 2 (shape [2, 3])}}
  %0 = kiln.concat %a, %b dim = 1 : tensor<2x3xi32>, tensor<2x3x1xi32>
  return
}

// -----

func.func @other_dim_differs(%a: tensor<4x3x5xf16>, %b: tensor<4x2x5xf16>, %c: tensor<4x1x6xf16>) {
  // expected-error @+1 {{input 2 has shape [4, 1, 6] but input 0 has shape [4, 3, 5]: dimension 2 differs (only dimension 1, the concatenation dimension, may differ)}}
  %0 = kiln.concat %a, %b, %c dim = 1 : tensor<4x3x5xf16>, tensor<4x2x5xf16>, tensor<4x1x6xf16>
  return
}

// -----

func.func @unranked(%a: tensor<2xf32>, %b: tensor<*xf32>) {
  // expected-error @+1 {{input 1 must be a ranked tensor}}
  %0 = kiln.concat %a, %b dim = 0 : tensor<2xf32>, tensor<*xf32>
  return
}

// -----

func.func @f64_inputs(%a: tensor<2xf64>, %b: tensor<3xf64>) {
  // expected-error @+1 {{'kiln.concat' op operand #0 must be variadic of statically shaped tensor of}}
  %0 = kiln.concat %a, %b dim = 0 : tensor<2xf64>, tensor<3xf64>
  return
}
