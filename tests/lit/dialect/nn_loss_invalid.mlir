// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @mse_shapes(%p: tensor<16x3xf32>, %t: tensor<16x1xf32>) {
  // expected-error @+1 {{'kiln.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "kiln.mse_loss"(%p, %t) <{reduction = #kiln<reduction mean>}> : (tensor<16x3xf32>, tensor<16x1xf32>) -> tensor<f32>
  return
}

// -----

func.func @mse_integer(%p: tensor<16x3xi32>) {
  // expected-error @+1 {{'kiln.mse_loss' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16x3xi32>'}}
  %0 = kiln.mse_loss %p, %p : tensor<16x3xi32>
  return
}

// -----

func.func @mse_wrong_result(%p: tensor<16x3xf32>) {
  // expected-error @+2 {{'kiln.mse_loss' op inferred type(s) 'tensor<f32>' are incompatible with return type(s) of operation 'tensor<1xf32>'}}
  // expected-error @+1 {{'kiln.mse_loss' op failed to infer returned types}}
  %0 = "kiln.mse_loss"(%p, %p) <{reduction = #kiln<reduction sum>}> : (tensor<16x3xf32>, tensor<16x3xf32>) -> tensor<1xf32>
  return
}

// -----

func.func @ce_rank(%l: tensor<4x32x10xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op 'logits' must have rank 2 ([N, C]), got [4, 32, 10]}}
  %0 = kiln.cross_entropy %l, %y : tensor<4x32x10xf32>, tensor<4xi32>
  return
}

// -----

func.func @ce_labels(%l: tensor<32x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op 'labels' must have shape [32] (N of 'logits'), got [16]}}
  %0 = kiln.cross_entropy %l, %y : tensor<32x10xf32>, tensor<16xi32>
  return
}

// -----

func.func @ce_smoothing(%l: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op 'label_smoothing' must be in [0, 1], got 1.500000e+00}}
  %0 = kiln.cross_entropy %l, %y label_smoothing = 1.5 : tensor<32x10xf32>, tensor<32xi32>
  return
}

// -----

func.func @ce_ignore_index_range(%l: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op 'ignore_index' must be an i32 value like the labels, got 4294967296}}
  %0 = kiln.cross_entropy %l, %y ignore_index = 4294967296 : tensor<32x10xf32>, tensor<32xi32>
  return
}

// -----

func.func @ce_ignore_index_float(%l: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{floating point value not valid for specified type}}
  %0 = kiln.cross_entropy %l, %y ignore_index = 1.5 : tensor<32x10xf32>, tensor<32xi32>
  return
}

// -----

func.func @ce_ignore_index_type(%l: tensor<32x10xf32>, %y: tensor<32xi32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op attribute 'ignore_index' failed to satisfy constraint: 64-bit signless integer attribute}}
  %0 = "kiln.cross_entropy"(%l, %y) <{ignore_index = 1 : i32}> : (tensor<32x10xf32>, tensor<32xi32>) -> tensor<f32>
  return
}

// -----

func.func @ce_float_labels(%l: tensor<32x10xf32>, %y: tensor<32xf32>) {
  // expected-error @+1 {{'kiln.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer values, but got 'tensor<32xf32>'}}
  %0 = kiln.cross_entropy %l, %y : tensor<32x10xf32>, tensor<32xf32>
  return
}

// -----

func.func @bce_types(%x: tensor<7x1xf32>, %t: tensor<7x1xbf16>) {
  // expected-error @+1 {{'kiln.binary_cross_entropy' op failed to verify that all of {logits, target} have same type}}
  %0 = "kiln.binary_cross_entropy"(%x, %t) <{reduction = #kiln<reduction mean>}> : (tensor<7x1xf32>, tensor<7x1xbf16>) -> tensor<f32>
  return
}
