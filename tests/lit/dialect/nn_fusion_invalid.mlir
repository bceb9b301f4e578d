// RUN: kiln-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

func.func @unknown_kind(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fusion' op 'kind' must be one of pointwise, reduction, gemm, attention, rnn, conv, pool, resize, batch_norm, embedding, optimizer, custom; got "elementwise"}}
  %r = kiln.fusion "elementwise" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @argument_count(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fusion' op body must have 2 arguments (one per input), got 1}}
  %r = kiln.fusion "pointwise" (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @argument_type(%a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'kiln.fusion' op body argument #1 must have type 'tensor<4xbf16>' (the type of input #1), got 'tensor<4xf32>'}}
  %r = kiln.fusion "pointwise" (%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_count(%a: tensor<4xf32>) {
  %r = kiln.fusion "pointwise" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'kiln.yield' op must yield 1 values (one per result of the fusion), got 2}}
    kiln.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return
}

// -----

func.func @yield_type(%a: tensor<4x3xf32>) {
  %r = kiln.fusion "reduction" (%a) : (tensor<4x3xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4x3xf32>):
    %s = kiln.reduce_sum %x dims = [0] : tensor<4x3xf32>
    // expected-error @+1 {{'kiln.yield' op value #0 must have type 'tensor<4xf32>' (the type of fusion result #0), got 'tensor<3xf32>'}}
    kiln.yield %s : tensor<3xf32>
  }
  return
}

// -----

func.func @not_yield(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fusion' op body must end in 'kiln.yield'}}
  %r = kiln.fusion "pointwise" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    "test.terminator"(%x) : (tensor<4xf32>) -> ()
  }
  return
}

// -----

func.func @isolated(%a: tensor<4xf32>) {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = kiln.fusion "pointwise" () : () -> tensor<4xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    kiln.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @two_blocks(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.fusion' op expects region #0 to have 0 or 1 blocks}}
  %r = kiln.fusion "pointwise" (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    "test.br"() [^bb1] : () -> ()
  ^bb1:
    kiln.yield %x : tensor<4xf32>
  }
  return
}

// -----

func.func @empty_region() {
  // expected-error @+1 {{'kiln.fusion' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
  "kiln.fusion"() <{kind = "pointwise"}> ({}) : () -> ()
  return
}

// -----

func.func @yield_outside(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.fusion'}}
  kiln.yield %a : tensor<4xf32>
}

// -----

func.func @mask_input(%a: tensor<4xi1>, %b: tensor<4xf64>) {
  // expected-error @+1 {{'kiln.fusion' op operand #1 must be variadic of statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 1-bit signless integer values, but got 'tensor<4xf64>'}}
  kiln.fusion "pointwise" (%a, %b) : (tensor<4xi1>, tensor<4xf64>) -> () {
  ^bb0(%x: tensor<4xi1>, %y: tensor<4xf64>):
    kiln.yield
  }
  return
}
