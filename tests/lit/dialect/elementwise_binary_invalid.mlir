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

// -----

func.func @sub_shape_mismatch(%a: tensor<2x5x7xi32>, %b: tensor<6x1xi32>) {
  // expected-error @+1 {{shapes [2, 5, 7] and [6, 1] are not broadcast-compatible: dimension 1 of the broadcast result is 5 vs 6}}
  %0 = kiln.sub %a, %b : tensor<2x5x7xi32>, tensor<6x1xi32>
  return
}

// -----

func.func @div_dtype_mismatch(%a: tensor<3x2xi32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{operand element types differ: 'i32' vs 'f16'}}
  %0 = kiln.div %a, %b : tensor<3x2xi32>, tensor<2xf16>
  return
}

// -----

func.func @mul_wrong_result(%a: tensor<3x1xbf16>, %b: tensor<1x7xbf16>) {
  // expected-error @+2 {{'kiln.mul' op inferred type(s) 'tensor<3x7xbf16>' are incompatible with return type(s) of operation 'tensor<3x7xf32>'}}
  // expected-error @+1 {{'kiln.mul' op failed to infer returned types}}
  %0 = "kiln.mul"(%a, %b) : (tensor<3x1xbf16>, tensor<1x7xbf16>) -> tensor<3x7xf32>
  return
}

// -----

func.func @pow_on_i32(%a: tensor<5x3xi32>, %b: tensor<3xi32>) {
  // expected-error @+1 {{'kiln.pow' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<5x3xi32>'}}
  %0 = kiln.pow %a, %b : tensor<5x3xi32>, tensor<3xi32>
  return
}

// -----

func.func @max_on_masks(%a: tensor<2x6xi1>, %b: tensor<6xi1>) {
  // expected-error @+1 {{'kiln.max' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<2x6xi1>'}}
  %0 = kiln.max %a, %b : tensor<2x6xi1>, tensor<6xi1>
  return
}

// -----

func.func @compare_shape_mismatch(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes [4, 8] and [4] are not broadcast-compatible: dimension 1 of the broadcast result is 8 vs 4}}
  %0 = kiln.compare lt, %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @compare_dtype_mismatch(%a: tensor<4x8xi32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{operand element types differ: 'i32' vs 'f32'}}
  %0 = kiln.compare ge, %a, %b : tensor<4x8xi32>, tensor<8xf32>
  return
}

// -----

func.func @compare_result_not_mask(%a: tensor<3x5xf16>, %b: tensor<5xf16>) {
  // expected-error @+1 {{'kiln.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<3x5xf16>'}}
  %0 = "kiln.compare"(%a, %b) <{predicate = #kiln<cmp eq>}> : (tensor<3x5xf16>, tensor<5xf16>) -> tensor<3x5xf16>
  return
}

// -----

func.func @compare_on_masks(%a: tensor<3x5xi1>, %b: tensor<5xi1>) {
  // expected-error @+1 {{'kiln.compare' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<3x5xi1>'}}
  %0 = kiln.compare ne, %a, %b : tensor<3x5xi1>, tensor<5xi1>
  return
}

// -----

func.func @compare_unknown_predicate(%a: tensor<3x5xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{expected ::mlir::kiln::CmpPredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Kiln_CmpPredicateAttr parameter 'value' which is to be a `::mlir::kiln::CmpPredicate`}}
  %0 = kiln.compare less, %a, %b : tensor<3x5xf32>, tensor<5xf32>
  return
}

// -----

func.func @select_value_dtypes(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{'true_value' and 'false_value' element types differ: 'f32' vs 'bf16'}}
  %0 = kiln.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xbf16>
  return
}

// -----

func.func @select_value_shapes(%c: tensor<4x8xi1>, %a: tensor<4x8xi32>, %b: tensor<3x1xi32>) {
  // expected-error @+1 {{'true_value' and 'false_value': shapes [4, 8] and [3, 1] are not broadcast-compatible: dimension 0 of the broadcast result is 4 vs 3}}
  %0 = kiln.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xi32>, tensor<3x1xi32>
  return
}

// -----

func.func @select_condition_shape(%c: tensor<3x2xi1>, %a: tensor<2x1x8xf16>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'condition' does not broadcast with the values' shape: shapes [3, 2] and [2, 1, 8] are not broadcast-compatible: dimension 2 of the broadcast result is 2 vs 8}}
  %0 = kiln.select %c, %a, %b : tensor<3x2xi1>, tensor<2x1x8xf16>, tensor<8xf16>
  return
}

// -----

func.func @select_condition_not_mask(%c: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'kiln.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4x8xf32>'}}
  %0 = kiln.select %c, %a, %b : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>
  return
}

// -----

func.func @select_wrong_result(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'kiln.select' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{'kiln.select' op failed to infer returned types}}
  %0 = "kiln.select"(%c, %a, %b) : (tensor<2x1xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}
