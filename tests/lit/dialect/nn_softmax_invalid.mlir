// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @dim_out_of_range(%x: tensor<3x10xf32>) {
  // expected-error @+1 {{'kiln.softmax' op 'dim' must be in [0, 2) for an input of rank 2, got 2}}
  %0 = kiln.softmax %x dim = 2 : tensor<3x10xf32>
  return
}

// -----

func.func @dim_negative(%x: tensor<3x10x4xf32>) {
  // expected-error @+1 {{'kiln.log_softmax' op 'dim' must be in [0, 3) for an input of rank 3, got -1}}
  %0 = kiln.log_softmax %x dim = -1 : tensor<3x10x4xf32>
  return
}

// -----

func.func @integer_input(%x: tensor<3x10xi32>) {
  // expected-error @+1 {{'kiln.softmax' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<3x10xi32>'}}
  %0 = kiln.softmax %x dim = 1 : tensor<3x10xi32>
  return
}

// -----

func.func @wrong_result(%x: tensor<3x10xf32>) {
  // expected-error @+1 {{'kiln.softmax' op requires the same type for all operands and results}}
  %0 = "kiln.softmax"(%x) {dim = 1 : i64} : (tensor<3x10xf32>) -> tensor<3x10xbf16>
  return
}
