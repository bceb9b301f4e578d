// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @start_length(%x: tensor<4x9xf32>) {
  // expected-error @+1 {{'start' has 1 entry, expected 2 (the rank of the input)}}
  %0 = kiln.slice %x start = [0] limit = [4, 9] step = [1, 1] : tensor<4x9xf32>
  return
}

// -----

func.func @limit_length(%x: tensor<4x9xf32>) {
  // expected-error @+1 {{'limit' has 3 entries, expected 2 (the rank of the input)}}
  %0 = kiln.slice %x start = [0, 0] limit = [4, 9, 1] step = [1, 1] : tensor<4x9xf32>
  return
}

// -----

func.func @step_length(%x: tensor<4x9xf32>) {
  // expected-error @+1 {{'step' has 0 entries, expected 2 (the rank of the input)}}
  %0 = kiln.slice %x start = [0, 0] limit = [4, 9] step = [] : tensor<4x9xf32>
  return
}

// -----

func.func @step_zero(%x: tensor<2x4x9xbf16>) {
  // expected-error @+1 {{'step' is 0 at dimension 2, expected >= 1}}
  %0 = kiln.slice %x start = [0, 0, 0] limit = [2, 4, 9] step = [1, 1, 0] : tensor<2x4x9xbf16>
  return
}

// -----

func.func @start_after_limit(%x: tensor<4x9xf32>) {
  // expected-error @+1 {{dimension 1 (size 9) has start 6 and limit 5, expected 0 <= start <= limit <= 9}}
  %0 = kiln.slice %x start = [0, 6] limit = [4, 5] step = [1, 1] : tensor<4x9xf32>
  return
}

// -----

func.func @limit_past_end(%x: tensor<4x9xi32>) {
  // expected-error @+1 {{dimension 0 (size 4) has start 1 and limit 5, expected 0 <= start <= limit <= 4}}
  %0 = kiln.slice %x start = [1, 0] limit = [5, 9] step = [2, 1] : tensor<4x9xi32>
  return
}

// -----

func.func @negative_start(%x: tensor<4x9xf32>) {
  // expected-error @+1 {{dimension 1 (size 9) has start -2 and limit 9, expected 0 <= start <= limit <= 9}}
  %0 = kiln.slice %x start = [0, -2] limit = [4, 9] step = [1, 1] : tensor<4x9xf32>
  return
}

// -----

func.func @wrong_result(%x: tensor<4x9xf32>) {
  // expected-error @+2 {{'kiln.slice' op inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<4x2xf32>'}}
  // expected-error @+1 {{'kiln.slice' op failed to infer returned types}}
  %0 = "kiln.slice"(%x) <{start = array<i64: 0, 1>, limit = array<i64: 4, 9>, step = array<i64: 1, 3>}> : (tensor<4x9xf32>) -> tensor<4x2xf32>
  return
}
