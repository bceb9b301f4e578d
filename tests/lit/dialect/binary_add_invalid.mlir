// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @shape_mismatch(%a: tensor<4x8xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{shapes [4, 8] and [3] are not broadcast-compatible: dimension 1 of the broadcast result is 8 vs 3}}
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<3xf32>
  return
}

// -----

func.func @dtype_mismatch(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{operand element types differ: 'f32' vs 'bf16'}}
  %0 = kiln.add %a, %b : tensor<4xf32>, tensor<4xbf16>
  return
}

// -----

func.func @wrong_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'kiln.add' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error @+1 {{'kiln.add' op failed to infer returned types}}
  %0 = "kiln.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return
}
