// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @flip_out_of_range(%x: tensor<2x3x5xf32>) {
  // expected-error @+1 {{'kiln.flip' op 'dims': dimension 3 is out of range for rank 3 (expected 0 <= dim < 3)}}
  %0 = kiln.flip %x dims = [0, 3] : tensor<2x3x5xf32>
  return
}

// -----

func.func @flip_negative(%x: tensor<4x7xi32>) {
  // expected-error @+1 {{'kiln.flip' op 'dims': dimension -1 is out of range for rank 2 (expected 0 <= dim < 2)}}
  %0 = kiln.flip %x dims = [-1] : tensor<4x7xi32>
  return
}

// -----

func.func @flip_repeated(%x: tensor<2x3x5xbf16>) {
  // expected-error @+1 {{'kiln.flip' op 'dims': dimension 2 is listed twice}}
  %0 = kiln.flip %x dims = [2, 0, 2] : tensor<2x3x5xbf16>
  return
}

// -----

func.func @flip_f64(%x: tensor<3xf64>) {
  // expected-error @+1 {{'kiln.flip' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<3xf64>'}}
  %0 = kiln.flip %x dims = [0] : tensor<3xf64>
  return
}

// -----

func.func @flip_result_type(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'kiln.flip' op requires the same type for all operands and results}}
  %0 = "kiln.flip"(%x) <{dims = array<i64: 0>}> : (tensor<3x4xf32>) -> tensor<3x4xf16>
  return
}

// -----

func.func @triu_rank1(%x: tensor<7xf32>) {
  // expected-error @+1 {{'kiln.triu' op input must have rank >= 2 (its last two dimensions are the matrix), got rank 1 (shape [7])}}
  %0 = kiln.triu %x diagonal = 1 : tensor<7xf32>
  return
}

// -----

func.func @tril_rank0(%x: tensor<i32>) {
  // expected-error @+1 {{'kiln.tril' op input must have rank >= 2 (its last two dimensions are the matrix), got rank 0 (shape [])}}
  %0 = kiln.tril %x : tensor<i32>
  return
}

// -----

func.func @tril_dynamic(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'kiln.tril' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<?x4xf32>'}}
  %0 = kiln.tril %x : tensor<?x4xf32>
  return
}
