// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @dims_empty(%x: tensor<3x5xf32>) {
  // expected-error @+1 {{'dims' is empty: list the dimensions to reduce (all of them to reduce over every element)}}
  %0 = kiln.reduce_sum %x dims = [] : tensor<3x5xf32>
  return
}

// -----

func.func @dims_out_of_range(%x: tensor<3x5x7xf16>) {
  // expected-error @+1 {{'dims': dimension 3 is out of range for rank 3 (expected 0 <= dim < 3)}}
  %0 = kiln.reduce_max %x dims = [0, 3] keepdim : tensor<3x5x7xf16>
  return
}

// -----

func.func @dims_repeated(%x: tensor<3x5x7xi32>) {
  // expected-error @+1 {{'dims': dimension 1 is listed twice}}
  %0 = kiln.reduce_min %x dims = [1, 2, 1] : tensor<3x5x7xi32>
  return
}

// -----

func.func @mean_of_int(%x: tensor<3x5xi32>) {
  // expected-error @+1 {{'kiln.reduce_mean' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<3x5xi32>'}}
  %0 = kiln.reduce_mean %x dims = [1] : tensor<3x5xi32>
  return
}

// -----

func.func @max_of_mask(%x: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.reduce_max' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = kiln.reduce_max %x dims = [0] : tensor<4xi1>
  return
}

// -----

func.func @wrong_result(%x: tensor<3x5xf32>) {
  // expected-error @+2 {{'kiln.reduce_mean' op inferred type(s) 'tensor<3x1xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kiln.reduce_mean' op failed to infer returned types}}
  %0 = "kiln.reduce_mean"(%x) <{dims = array<i64: 1>, keepdim}> : (tensor<3x5xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @argmax_dim(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'dim': dimension 2 is out of range for rank 2 (expected 0 <= dim < 2)}}
  %0 = kiln.argmax %x dim = 2 : tensor<4x10xf32>
  return
}

// -----

func.func @argmax_negative_dim(%x: tensor<4x10xbf16>) {
  // expected-error @+1 {{'dim': dimension -1 is out of range for rank 2 (expected 0 <= dim < 2)}}
  %0 = kiln.argmax %x dim = -1 keepdim : tensor<4x10xbf16>
  return
}

// -----

func.func @argmax_of_mask(%x: tensor<4x3xi1>) {
  // expected-error @+1 {{'kiln.argmax' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<4x3xi1>'}}
  %0 = kiln.argmax %x dim = 1 : tensor<4x3xi1>
  return
}

// -----

func.func @argmax_float_result(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'kiln.argmax' op result #0 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = "kiln.argmax"(%x) <{dim = 1 : i64}> : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}
