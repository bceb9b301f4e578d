// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// The custom form reads ranked tensor types only (inference rejects others
// defensively, but the operand constraints reject them first).
func.func @attention_unranked(%q: tensor<*xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>, %o: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{custom op 'kiln.attention_backward' invalid kind of type specified}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<*xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @attention_key_rank(%q: tensor<2x4x16x64xf32>, %k: tensor<8x16x64xf32>, %v: tensor<2x4x16x64xf32>, %o: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'key' must have rank 4 ([B, H, Tk, D]), got [8, 16, 64]}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x4x16x64xf32>, tensor<8x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @attention_key_dim(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x4xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x5x6xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'key' must have shape [2, 3, 7, 8] (B, H and D of 'query'), got [2, 3, 7, 4]}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x3x5x8xf32>, tensor<2x3x7x4xf32>, tensor<2x3x7x6xf32>, tensor<2x3x5x6xf32>
  return
}

// -----

func.func @attention_value_length(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x5x6xf32>, %o: tensor<2x3x5x6xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'value' must have shape [2, 3, 7, 6] (B and H of 'query', Tk of 'key'), got [2, 3, 5, 6]}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x5x6xf32>, tensor<2x3x5x6xf32>
  return
}

// -----

func.func @attention_out_shape(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x7x6xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'out' must have shape [2, 3, 5, 6] (B, H, Tq of 'query' and Dv of 'value'), got [2, 3, 7, 6]}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>, tensor<2x3x7x6xf32>
  return
}

// -----

func.func @attention_out_dtype(%q: tensor<2x3x5x8xbf16>, %k: tensor<2x3x7x8xbf16>, %v: tensor<2x3x7x6xbf16>, %o: tensor<2x3x5x6xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'out' must have element type 'bf16' like 'query', got 'f32'}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x3x5x8xbf16>, tensor<2x3x7x8xbf16>, tensor<2x3x7x6xbf16>, tensor<2x3x5x6xf32>
  return
}

// -----

func.func @attention_d_out_type(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x5x6xf32>, %do: tensor<2x3x5x6xbf16>) {
  // expected-error @+1 {{'kiln.attention_backward' op failed to verify that all of {out, d_out} have same type}}
  %r:3 = "kiln.attention_backward"(%q, %k, %v, %o, %do) : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>, tensor<2x3x5x6xf32>, tensor<2x3x5x6xbf16>) -> (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>)
  return
}

// -----

func.func @attention_scale(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x5x6xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'scale' must be positive, got -5.000000e-01}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o scale = -0.5 : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>, tensor<2x3x5x6xf32>
  return
}

// -----

func.func @attention_causal_long_query(%q: tensor<1x2x9x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %o: tensor<1x2x9x4xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op causal attention needs Tq <= Tk so that no query row is fully masked, got Tq = 9 and Tk = 5}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o causal : tensor<1x2x9x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x9x4xf32>
  return
}

// -----

func.func @attention_integer(%q: tensor<2x3x5x8xi32>, %k: tensor<2x3x7x8xi32>, %v: tensor<2x3x7x6xi32>, %o: tensor<2x3x5x6xi32>) {
  // expected-error @+1 {{'kiln.attention_backward' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x3x5x8xi32>'}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o : tensor<2x3x5x8xi32>, tensor<2x3x7x8xi32>, tensor<2x3x7x6xi32>, tensor<2x3x5x6xi32>
  return
}

// -----

func.func @attention_wrong_result(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x5x6xf32>) {
  // expected-error @+2 {{'kiln.attention_backward' op inferred type(s) 'tensor<2x3x5x8xf32>', 'tensor<2x3x7x8xf32>', 'tensor<2x3x7x6xf32>' are incompatible with return type(s) of operation 'tensor<2x3x5x8xf32>', 'tensor<2x3x5x8xf32>', 'tensor<2x3x7x6xf32>'}}
  // expected-error @+1 {{'kiln.attention_backward' op failed to infer returned types}}
  %r:3 = "kiln.attention_backward"(%q, %k, %v, %o, %o) : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>, tensor<2x3x5x6xf32>, tensor<2x3x5x6xf32>) -> (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x7x6xf32>)
  return
}

// -----

func.func @rnn_unranked(%wx: tensor<*xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>, %all: tensor<2x2x5x3x16xf32>) {
  // expected-error @+1 {{custom op 'kiln.rnn_backward' invalid kind of type specified}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = lstm : tensor<*xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
  return
}

// -----

func.func @rnn_input_rank(%wx: tensor<2x5x4x48xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>, %all: tensor<2x2x5x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'input' must have rank 5 ([B, T, Gw, NH, D]), got [2, 5, 4, 48]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = lstm : tensor<2x5x4x48xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
  return
}

// -----

func.func @rnn_input_gates(%wx: tensor<3x4x4x2x8xf32>, %r: tensor<3x2x8x8xf32>, %b: tensor<4x2x8xf32>, %s0: tensor<1x3x2x8xf32>, %all: tensor<1x3x4x2x8xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'input' must have shape [3, 4, 3, 2, 8] for gru (B, T, Gw, NH, D), got [3, 4, 4, 2, 8]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = gru : tensor<3x4x4x2x8xf32>, tensor<3x2x8x8xf32>, tensor<4x2x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x4x2x8xf32>
  return
}

// -----

func.func @rnn_recurrent(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x8xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>, %all: tensor<2x2x5x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'recurrent' must have shape [4, 3, 16, 16] for lstm (Gr, NH, D, D), got [4, 3, 16, 8]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = lstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x8xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<2x2x5x3x16xf32>
  return
}

// -----

func.func @rnn_bias(%wx: tensor<3x4x3x2x8xf32>, %r: tensor<3x2x8x8xf32>, %b: tensor<3x2x8xf32>, %s0: tensor<1x3x2x8xf32>, %all: tensor<1x3x4x2x8xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'bias' must have shape [4, 2, 8] for gru (Gb, NH, D), got [3, 2, 8]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = gru : tensor<3x4x3x2x8xf32>, tensor<3x2x8x8xf32>, tensor<3x2x8xf32>, tensor<1x3x2x8xf32>, tensor<1x3x4x2x8xf32>
  return
}

// -----

func.func @rnn_states0(%wx: tensor<2x5x4x3x16xf32>, %r: tensor<4x3x16x16xf32>, %b: tensor<4x3x16xf32>, %s0: tensor<2x2x3x16xf32>, %all: tensor<4x2x5x3x16xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'states0' must have shape [4, 2, 3, 16] for slstm (S, B, NH, D), got [2, 2, 3, 16]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = slstm : tensor<2x5x4x3x16xf32>, tensor<4x3x16x16xf32>, tensor<4x3x16xf32>, tensor<2x2x3x16xf32>, tensor<4x2x5x3x16xf32>
  return
}

// -----

func.func @rnn_states(%wx: tensor<2x7x1x3x4xf32>, %r: tensor<1x3x4x4xf32>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf32>, %all: tensor<1x2x6x3x4xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'states' must have shape [1, 2, 7, 3, 4] for elman (S, B, T, NH, D), got [1, 2, 6, 3, 4]}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = elman : tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x6x3x4xf32>
  return
}

// -----

func.func @rnn_dtype(%wx: tensor<2x7x1x3x4xf16>, %r: tensor<1x3x4x4xf16>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf16>, %all: tensor<1x2x7x3x4xf16>) {
  // expected-error @+1 {{'kiln.rnn_backward' op 'bias' must have element type 'f16' like 'input', got 'f32'}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = elman : tensor<2x7x1x3x4xf16>, tensor<1x3x4x4xf16>, tensor<1x3x4xf32>, tensor<1x2x3x4xf16>, tensor<1x2x7x3x4xf16>
  return
}

// -----

func.func @rnn_d_states(%wx: tensor<2x7x1x3x4xf32>, %r: tensor<1x3x4x4xf32>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf32>, %all: tensor<1x2x7x3x4xf32>, %dall: tensor<1x2x7x3x5xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op failed to verify that all of {states, d_states} have same type}}
  %res:4 = "kiln.rnn_backward"(%wx, %r, %b, %s0, %all, %dall, %s0) <{function = #kiln<rnn_function elman>}> : (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x7x3x4xf32>, tensor<1x2x7x3x5xf32>, tensor<1x2x3x4xf32>) -> (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>)
  return
}

// -----

func.func @rnn_d_last_states(%wx: tensor<2x7x1x3x4xf32>, %r: tensor<1x3x4x4xf32>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf32>, %all: tensor<1x2x7x3x4xf32>, %dlast: tensor<1x2x3x4xbf16>) {
  // expected-error @+1 {{'kiln.rnn_backward' op failed to verify that all of {states0, d_last_states} have same type}}
  %res:4 = "kiln.rnn_backward"(%wx, %r, %b, %s0, %all, %all, %dlast) <{function = #kiln<rnn_function elman>}> : (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x7x3x4xf32>, tensor<1x2x7x3x4xf32>, tensor<1x2x3x4xbf16>) -> (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>)
  return
}

// -----

func.func @rnn_integer(%wx: tensor<2x7x1x3x4xi32>, %r: tensor<1x3x4x4xf32>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf32>, %all: tensor<1x2x7x3x4xf32>) {
  // expected-error @+1 {{'kiln.rnn_backward' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x7x1x3x4xi32>'}}
  %dwx, %dr, %db, %ds0 = kiln.rnn_backward %wx, %r, %b, %s0, %all, %all, %s0 function = elman : tensor<2x7x1x3x4xi32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x7x3x4xf32>
  return
}

// -----

func.func @rnn_wrong_result(%wx: tensor<2x7x1x3x4xf32>, %r: tensor<1x3x4x4xf32>, %b: tensor<1x3x4xf32>, %s0: tensor<1x2x3x4xf32>, %all: tensor<1x2x7x3x4xf32>) {
  // expected-error @+2 {{'kiln.rnn_backward' op inferred type(s) 'tensor<2x7x1x3x4xf32>', 'tensor<1x3x4x4xf32>', 'tensor<1x3x4xf32>', 'tensor<1x2x3x4xf32>' are incompatible with return type(s) of operation 'tensor<2x7x1x3x4xf32>', 'tensor<1x3x4x4xf32>', 'tensor<1x3x4xf32>', 'tensor<1x2x7x3x4xf32>'}}
  // expected-error @+1 {{'kiln.rnn_backward' op failed to infer returned types}}
  %res:4 = "kiln.rnn_backward"(%wx, %r, %b, %s0, %all, %all, %s0) <{function = #kiln<rnn_function elman>}> : (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x7x3x4xf32>, tensor<1x2x7x3x4xf32>, tensor<1x2x3x4xf32>) -> (tensor<2x7x1x3x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4xf32>, tensor<1x2x7x3x4xf32>)
  return
}

// -----

func.func @attention_row_lse_shape(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x6xf32>, %o: tensor<2x3x5x6xf32>, %lse: tensor<2x3x7xf32>) {
  // expected-error @+1 {{'kiln.attention_backward' op 'row_lse' must have shape [2, 3, 5] (B, H and Tq of 'query'), got [2, 3, 7]}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o row_lse(%lse : tensor<2x3x7xf32>) : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x6xf32>, tensor<2x3x5x6xf32>
  return
}

// -----

func.func @attention_row_lse_type(%q: tensor<2x3x5x8xbf16>, %k: tensor<2x3x7x8xbf16>, %v: tensor<2x3x7x6xbf16>, %o: tensor<2x3x5x6xbf16>, %lse: tensor<2x3x5xbf16>) {
  // expected-error @+1 {{'kiln.attention_backward' op operand #5 must be statically shaped tensor of 32-bit float values, but got 'tensor<2x3x5xbf16>'}}
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %o row_lse(%lse : tensor<2x3x5xbf16>) : tensor<2x3x5x8xbf16>, tensor<2x3x7x8xbf16>, tensor<2x3x7x6xbf16>, tensor<2x3x5x6xbf16>
  return
}
