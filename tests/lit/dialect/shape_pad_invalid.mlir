// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @low_length(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'low' has 3 entries, expected 2 (the rank of the input)}}
  %0 = kiln.pad %x low = [0, 1, 2] high = [0, 0] : tensor<4x5xf32>
  return
}

// -----

func.func @high_length(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'high' has 1 entry, expected 2 (the rank of the input)}}
  %0 = kiln.pad %x low = [0, 1] high = [3] : tensor<4x5xf32>
  return
}

// -----

func.func @negative_high(%x: tensor<2x4x5xf16>) {
  // expected-error @+1 {{'high' is -1 at dimension 2, expected >= 0}}
  %0 = kiln.pad %x low = [0, 0, 1] high = [0, 2, -1] : tensor<2x4x5xf16>
  return
}

// -----

func.func @negative_low(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'low' is -3 at dimension 0, expected >= 0}}
  %0 = kiln.pad %x low = [-3, 0] high = [0, 0] : tensor<4x5xf32>
  return
}

// -----

func.func @mask_value(%m: tensor<3x3xi1>) {
  // expected-error @+1 {{'kiln.pad' op 'value' 2 cannot be stored in element type 'i1' (expected 0.0 or 1.0)}}
  %0 = kiln.pad %m low = [1, 0] high = [0, 1] value = 2.0 : tensor<3x3xi1>
  return
}

// -----

func.func @int_fraction(%i: tensor<6xi32>) {
  // expected-error @+1 {{'kiln.pad' op 'value' 0.25 cannot be stored in element type 'i32' (expected an integer in the i32 range)}}
  %0 = kiln.pad %i low = [1] high = [1] value = 0.25 : tensor<6xi32>
  return
}

// -----

func.func @int_range(%i: tensor<6xi32>) {
  // expected-error @+1 {{'kiln.pad' op 'value' 3e+09 cannot be stored in element type 'i32' (expected an integer in the i32 range)}}
  %0 = kiln.pad %i low = [1] high = [1] value = 3.0e9 : tensor<6xi32>
  return
}

// -----

func.func @f64_input(%x: tensor<4xf64>) {
  // expected-error @+1 {{'kiln.pad' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf64>'}}
  %0 = kiln.pad %x low = [0] high = [1] : tensor<4xf64>
  return
}
