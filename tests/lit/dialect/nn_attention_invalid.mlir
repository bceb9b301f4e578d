// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @query_rank(%q: tensor<4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'query' must have rank 4 ([B, H, Tq, D]), got [4, 16, 64]}}
  %0 = kiln.attention %q, %k, %v : tensor<4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @value_rank(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x8x8xf32>) {
  // expected-error @+1 {{'value' must have rank 4 ([B, H, Tk, Dv]), got [2, 4, 16, 8, 8]}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x8x8xf32>
  return
}

// -----

func.func @key_head_dim(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x9x32xf32>, %v: tensor<2x4x9x32xf32>) {
  // expected-error @+1 {{'kiln.attention' op 'key' must have shape [2, 4, 9, 64] (B, H and D of 'query'), got [2, 4, 9, 32]}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x9x32xf32>, tensor<2x4x9x32xf32>
  return
}

// -----

func.func @key_heads(%q: tensor<2x4x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'kiln.attention' op 'key' must have shape [2, 4, 16, 64] (B, H and D of 'query'), got [2, 2, 16, 64]}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @value_length(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x9x64xf32>, %v: tensor<2x4x16x32xf32>) {
  // expected-error @+1 {{'kiln.attention' op 'value' must have shape [2, 4, 9, 32] (B and H of 'query', Tk of 'key'), got [2, 4, 16, 32]}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x9x64xf32>, tensor<2x4x16x32xf32>
  return
}

// -----

func.func @value_dtype(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x9x64xf32>, %v: tensor<2x4x9x32xbf16>) {
  // expected-error @+1 {{'kiln.attention' op 'value' must have element type 'f32' like 'query', got 'bf16'}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xf32>, tensor<2x4x9x64xf32>, tensor<2x4x9x32xbf16>
  return
}

// -----

func.func @scale(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'kiln.attention' op 'scale' must be positive, got -1.250000e-01}}
  %0 = kiln.attention %q, %k, %v scale = -0.125 : tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @causal_long_query(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x9x64xf32>, %v: tensor<2x4x9x64xf32>) {
  // expected-error @+1 {{'kiln.attention' op causal attention needs Tq <= Tk so that no query row is fully masked, got Tq = 16 and Tk = 9}}
  %0 = kiln.attention %q, %k, %v causal : tensor<2x4x16x64xf32>, tensor<2x4x9x64xf32>, tensor<2x4x9x64xf32>
  return
}

// -----

func.func @integer(%q: tensor<2x4x16x64xi32>, %k: tensor<2x4x16x64xf32>, %v: tensor<2x4x16x64xf32>) {
  // expected-error @+1 {{'kiln.attention' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<2x4x16x64xi32>'}}
  %0 = kiln.attention %q, %k, %v : tensor<2x4x16x64xi32>, tensor<2x4x16x64xf32>, tensor<2x4x16x64xf32>
  return
}

// -----

func.func @wrong_result(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x9x64xf32>, %v: tensor<2x4x9x32xf32>) {
  // expected-error @+2 {{'kiln.attention' op inferred type(s) 'tensor<2x4x16x32xf32>' are incompatible with return type(s) of operation 'tensor<2x4x16x64xf32>'}}
  // expected-error @+1 {{'kiln.attention' op failed to infer returned types}}
  %0 = "kiln.attention"(%q, %k, %v) : (tensor<2x4x16x64xf32>, tensor<2x4x9x64xf32>, tensor<2x4x9x32xf32>) -> tensor<2x4x16x64xf32>
  return
}
