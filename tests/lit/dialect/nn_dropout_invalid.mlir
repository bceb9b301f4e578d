// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @rate_one(%x: tensor<8x129xf32>) {
  // expected-error @+1 {{'kiln.dropout' op 'rate' must be in [0, 1), got 1.000000e+00}}
  %0 = kiln.dropout %x rate = 1.0 seed = 1 : tensor<8x129xf32>
  return
}

// -----

func.func @rate_negative(%x: tensor<8x129xf32>) {
  // expected-error @+1 {{'kiln.dropout' op 'rate' must be in [0, 1), got -5.000000e-01}}
  %0 = kiln.dropout %x rate = -0.5 seed = 1 : tensor<8x129xf32>
  return
}

// -----

func.func @seed(%x: tensor<8x129xf32>) {
  // expected-error @+1 {{'kiln.dropout' op 'seed' must be non-negative, got -1}}
  %0 = kiln.dropout %x rate = 0.5 seed = -1 : tensor<8x129xf32>
  return
}

// -----

func.func @stream(%x: tensor<8x129xf32>) {
  // expected-error @+1 {{'kiln.dropout' op 'stream' must be non-negative, got -2}}
  %0 = kiln.dropout %x rate = 0.5 seed = 1 stream = -2 : tensor<8x129xf32>
  return
}

// -----

func.func @offset_shape(%x: tensor<8x129xf32>, %o: tensor<1xi32>) {
  // expected-error @+1 {{'kiln.dropout' op operand #1 must be 0-d tensor of i32 (tensor<i32>), but got 'tensor<1xi32>'}}
  %0 = "kiln.dropout"(%x, %o) <{rate = 0.5 : f64, seed = 1 : i64, stream = 0 : i64}> : (tensor<8x129xf32>, tensor<1xi32>) -> tensor<8x129xf32>
  return
}

// -----

func.func @integer(%x: tensor<8x129xi32>) {
  // expected-error @+1 {{'kiln.dropout' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<8x129xi32>'}}
  %0 = kiln.dropout %x rate = 0.5 seed = 1 : tensor<8x129xi32>
  return
}

// -----

func.func @wrong_result(%x: tensor<8x129xf32>) {
  // expected-error @+1 {{'kiln.dropout' op failed to verify that all of {input, result} have same type}}
  %0 = "kiln.dropout"(%x) <{rate = 0.5 : f64, seed = 1 : i64, stream = 0 : i64}> : (tensor<8x129xf32>) -> tensor<8x129xbf16>
  return
}
