// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @perm_length(%x: tensor<3x5x7xf32>) {
  // expected-error @+1 {{'perm' [1, 0] has 2 entries, expected 3 (the rank of the input)}}
  %0 = kiln.transpose %x perm = [1, 0] : tensor<3x5x7xf32>
  return
}

// -----

func.func @perm_out_of_range(%x: tensor<3x5x7xf32>) {
  // expected-error @+1 {{'perm' [0, 3, 1] is not a permutation of 0..2: entry 3 is out of range}}
  %0 = kiln.transpose %x perm = [0, 3, 1] : tensor<3x5x7xf32>
  return
}

// -----

func.func @perm_repeated(%x: tensor<2x6xi32>) {
  // expected-error @+1 {{'perm' [1, 1] is not a permutation of 0..1: entry 1 appears twice}}
  %0 = kiln.transpose %x perm = [1, 1] : tensor<2x6xi32>
  return
}

// -----

// The custom form reads a ranked tensor type only.
func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'kiln.transpose' invalid kind of type specified}}
  %0 = kiln.transpose %x perm = [0] : tensor<*xf32>
  return
}

// -----

func.func @wrong_result(%x: tensor<3x5xf32>) {
  // expected-error @+2 {{'kiln.transpose' op inferred type(s) 'tensor<5x3xf32>' are incompatible with return type(s) of operation 'tensor<3x5xf32>'}}
  // expected-error @+1 {{'kiln.transpose' op failed to infer returned types}}
  %0 = "kiln.transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

func.func @f64_input(%x: tensor<3x5xf64>) {
  // expected-error @+1 {{'kiln.transpose' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<3x5xf64>'}}
  %0 = kiln.transpose %x perm = [1, 0] : tensor<3x5xf64>
  return
}
