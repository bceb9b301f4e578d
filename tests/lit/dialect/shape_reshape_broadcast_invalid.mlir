// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @reshape_count(%x: tensor<3x4x10xf32>) {
  // expected-error @+1 {{'kiln.reshape' op input shape [3, 4, 10] has 120 elements but result shape [11, 10] has 110}}
  %0 = kiln.reshape %x : tensor<3x4x10xf32> -> tensor<11x10xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<6x5xf32>) {
  // expected-error @+1 {{'kiln.reshape' op result element type 'f16' differs from input element type 'f32'}}
  %0 = kiln.reshape %x : tensor<6x5xf32> -> tensor<30xf16>
  return
}

// -----

func.func @reshape_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'kiln.reshape' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<?x8xf32>'}}
  %0 = kiln.reshape %x : tensor<?x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @reshape_f64(%x: tensor<2x3xf64>) {
  // expected-error @+1 {{'kiln.reshape' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.reshape %x : tensor<2x3xf64> -> tensor<6xf64>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<3x5xf32>) {
  // expected-error @+1 {{'kiln.broadcast_to' op cannot broadcast [3, 5] to [2, 4, 5]: input dimension 0 has size 3, which is neither 1 nor the size 4 of result dimension 1}}
  %0 = kiln.broadcast_to %x : tensor<3x5xf32> -> tensor<2x4x5xf32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<2x1x7xbf16>) {
  // expected-error @+1 {{'kiln.broadcast_to' op cannot broadcast [2, 1, 7] to [9, 7]: the input has rank 3, more than the result's rank 2}}
  %0 = kiln.broadcast_to %x : tensor<2x1x7xbf16> -> tensor<9x7xbf16>
  return
}

// -----

func.func @broadcast_element_type(%x: tensor<1x5xi32>) {
  // expected-error @+1 {{'kiln.broadcast_to' op result element type 'f32' differs from input element type 'i32'}}
  %0 = kiln.broadcast_to %x : tensor<1x5xi32> -> tensor<3x5xf32>
  return
}
