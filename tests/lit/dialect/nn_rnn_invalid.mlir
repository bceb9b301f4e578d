// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @input_rank(%wx: tensor<2x5x4x48xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>) {
  // expected-error @+1 {{'input' must have rank 5 ([B, T, Gw, NH, D]), got [2, 5, 4, 48]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm : tensor<2x5x4x48xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
  return
}

// -----

func.func @input_gates(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<3x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<1x2x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn' op 'input' must have shape [2, 5, 3, 3, 16] for gru (B, T, Gw, NH, D), got [2, 5, 4, 3, 16]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = gru : tensor<2x5x4x3x16xf32>, tensor<3x3x16x16xf32>, tensor<4x3x16xf32>, tensor<1x2x3x16xf32>
  return
}

// -----

func.func @recurrent_block(%wx: tensor<2x5x4x12x64xf32>, %r: tensor<4x12x64x32xf32>, %b: tensor<4x12x64xf32>, %s0: tensor<2x2x12x64xf32>) {
  // expected-error @+1 {{'kiln.rnn' op 'recurrent' must have shape [4, 12, 64, 64] for lstm (Gr, NH, D, D), got [4, 12, 64, 32]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = lstm : tensor<2x5x4x12x64xf32>, tensor<4x12x64x32xf32>, tensor<4x12x64xf32>, tensor<2x2x12x64xf32>
  return
}

// -----

func.func @bias_gates_gru(%wx: tensor<2x5x3x3x16xf32>, %r: tensor<3x3x16x16xf32>, %b: tensor<3x3x16xf32>, %s0: tensor<1x2x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn' op 'bias' must have shape [4, 3, 16] for gru (Gb, NH, D), got [3, 3, 16]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = gru : tensor<2x5x3x3x16xf32>, tensor<3x3x16x16xf32>, tensor<3x3x16xf32>, tensor<1x2x3x16xf32>
  return
}

// -----

func.func @states_slstm(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn' op 'states0' must have shape [4, 2, 3, 16] for slstm (S, B, NH, D), got [2, 2, 3, 16]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = slstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>
  return
}

// -----

func.func @states_batch(%wx: tensor<2x5x1x3x16xf32>, %r: tensor<1x3x16x16xf32>, %b: tensor<1x3x16xf32>, %s0: tensor<1x4x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn' op 'states0' must have shape [1, 2, 3, 16] for elman (S, B, NH, D), got [1, 4, 3, 16]}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<2x5x1x3x16xf32>, tensor<1x3x16x16xf32>, tensor<1x3x16xf32>, tensor<1x4x3x16xf32>
  return
}

// -----

func.func @dtype(%wx: tensor<2x5x1x3x16xbf16>, %r: tensor<1x3x16x16xf32>, %b: tensor<1x3x16xbf16>, %s0: tensor<1x2x3x16xbf16>) {
  // expected-error @+1 {{'kiln.rnn' op 'recurrent' must have element type 'bf16' like 'input', got 'f32'}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<2x5x1x3x16xbf16>, tensor<1x3x16x16xf32>, tensor<1x3x16xbf16>, tensor<1x2x3x16xbf16>
  return
}

// -----

func.func @integer(%wx: tensor<2x5x1x3x16xi32>, %r: tensor<1x3x16x16xf32>, %b: tensor<1x3x16xf32>, %s0: tensor<1x2x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x5x1x3x16xi32>'}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<2x5x1x3x16xi32>, tensor<1x3x16x16xf32>, tensor<1x3x16xf32>, tensor<1x2x3x16xf32>
  return
}

// -----

func.func @unknown_function(%wx: tensor<2x5x1x3x16xf32>, %r: tensor<1x3x16x16xf32>, %b: tensor<1x3x16xf32>, %s0: tensor<1x2x3x16xf32>) {
  // expected-error @+2 {{custom op 'kiln.rnn' expected ::mlir::kiln::RnnFunction to be one of: lstm, gru, elman, slstm}}
  // expected-error @+1 {{custom op 'kiln.rnn' failed to parse Kiln_RnnFunctionAttr parameter 'value' which is to be a `::mlir::kiln::RnnFunction`}}
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = mlstm : tensor<2x5x1x3x16xf32>, tensor<1x3x16x16xf32>, tensor<1x3x16xf32>, tensor<1x2x3x16xf32>
  return
}

// -----

func.func @wrong_result(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>) {
  // expected-error @+2 {{'kiln.rnn' op inferred type(s) 'tensor<2x2x5x3x16xf32>', 'tensor<2x2x3x16xf32>' are incompatible with return type(s) of operation 'tensor<2x5x2x3x16xf32>', 'tensor<2x2x3x16xf32>'}}
  // expected-error @+1 {{'kiln.rnn' op failed to infer returned types}}
  %all:2 = "kiln.rnn"(%wx, %r, %b, %s0) <{function = #kiln<rnn_function lstm>}> : (tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>) -> (tensor<2x5x2x3x16xf32>, tensor<2x2x3x16xf32>)
  return
}
