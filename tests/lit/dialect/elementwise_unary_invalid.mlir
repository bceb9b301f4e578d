// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @float_op_on_i32(%x: tensor<5x3xi32>) {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<5x3xi32>'}}
  %0 = kiln.exp %x : tensor<5x3xi32>
  return
}

// -----

func.func @gelu_on_mask(%x: tensor<2x7xi1>) {
  // expected-error @+1 {{'kiln.gelu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x7xi1>'}}
  %0 = kiln.gelu %x approximate = tanh : tensor<2x7xi1>
  return
}

// -----

func.func @numeric_op_on_mask(%x: tensor<3x1x4xi1>) {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<3x1x4xi1>'}}
  %0 = kiln.relu %x : tensor<3x1x4xi1>
  return
}

// -----

func.func @numeric_op_on_f64(%x: tensor<6xf64>) {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<6xf64>'}}
  %0 = kiln.neg %x : tensor<6xf64>
  return
}

// -----

func.func @result_type_differs(%x: tensor<4x9xbf16>) {
  // expected-error @+1 {{'kiln.sigmoid' op requires the same type for all operands and results}}
  %0 = "kiln.sigmoid"(%x) : (tensor<4x9xbf16>) -> tensor<4x9xf32>
  return
}

// -----

func.func @gelu_unknown_approximation(%x: tensor<4x9xf32>) {
  // expected-error @+2 {{expected ::mlir::kiln::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Kiln_GeluApproximationAttr parameter 'value' which is to be a `::mlir::kiln::GeluApproximation`}}
  %0 = kiln.gelu %x approximate = fast : tensor<4x9xf32>
  return
}

// -----

func.func @cast_shape_differs(%x: tensor<4x3x5xf32>) {
  // expected-error @+1 {{'kiln.cast' op 'input' shape [4, 3, 5] and result shape [4, 5, 3] differ; cast changes only the element type}}
  %0 = kiln.cast %x : tensor<4x3x5xf32> to tensor<4x5x3xbf16>
  return
}

// -----

func.func @cast_rank_differs(%x: tensor<6xi32>) {
  // expected-error @+1 {{'kiln.cast' op 'input' shape [6] and result shape [1, 6] differ; cast changes only the element type}}
  %0 = kiln.cast %x : tensor<6xi32> to tensor<1x6xi1>
  return
}

// -----

func.func @cast_to_f64(%x: tensor<6xf32>) {
  // expected-error @+1 {{'kiln.cast' op result #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<6xf64>'}}
  %0 = kiln.cast %x : tensor<6xf32> to tensor<6xf64>
  return
}
