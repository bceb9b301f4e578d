// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @no_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.custom' op must have at least one result}}
  kiln.custom "f" from "k.cu" (%x) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @entry_not_identifier(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'forward' must name a C++ function template (an identifier, optionally qualified with ::), got "my-kernel"}}
  %y = kiln.custom "my-kernel" from "k.cu" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @backward_not_identifier(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'backward' must name a C++ function template (an identifier, optionally qualified with ::), got "2grad"}}
  %y = kiln.custom "f" from "k.cu" (%x) backward "2grad" : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @empty_source(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'source' must name the CUDA C++ file of the kernel}}
  %y = kiln.custom "f" from "" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @backward_from_alone(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'backward_from' needs a 'backward' function}}
  %y = kiln.custom "f" from "k.cu" (%x) backward_from "g.cu" : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @param_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op parameter 'mode' must be an integer or an f32 or f64 float, got "fast"}}
  %y = kiln.custom "f" from "k.cu" (%x) params {mode = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @param_f16(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op parameter 'eps' must be an integer or an f32 or f64 float, got 5.000000e-01 : f16}}
  %y = kiln.custom "f" from "k.cu" (%x) params {eps = 0.5 : f16} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @param_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op parameter "a.b" must be named by a C++ identifier}}
  %y = kiln.custom "f" from "k.cu" (%x) params {"a.b" = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @block_size(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'block_size' must be a multiple of 32 in [32, 1024], got 100}}
  %y = kiln.custom "f" from "k.cu" (%x) block_size = 100 : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @block_size_large(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op 'block_size' must be a multiple of 32 in [32, 1024], got 2048}}
  %y = kiln.custom "f" from "k.cu" (%x) block_size = 2048 : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @rank(%x: tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op operand #0 has rank 9; a custom kernel's tensors have rank at most 8}}
  %y = kiln.custom "f" from "k.cu" (%x) : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @mask(%x: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom' op operand #0 must be variadic of statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float or 32-bit signless integer values, but got 'tensor<4xi1>'}}
  %y = kiln.custom "f" from "k.cu" (%x) : (tensor<4xi1>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @backward_grad_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom_backward' op needs one output gradient per forward output (1), got 2}}
  %dx = kiln.custom_backward "g" from "k.cu" inputs(%x) outputs(%y) output_grads(%y, %y)
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %dx : tensor<4xf32>
}

// -----

func.func @backward_grad_type(%x: tensor<4xf32>, %y: tensor<4xf32>, %g: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.custom_backward' op output gradient #0 must have type 'tensor<4xf32>' (forward output #0), got 'tensor<4xbf16>'}}
  %dx = kiln.custom_backward "g" from "k.cu" inputs(%x) outputs(%y) output_grads(%g)
      : (tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %dx : tensor<4xf32>
}

// -----

func.func @backward_result_count(%x: tensor<4xf32>, %i: tensor<4xi32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  // expected-error @+1 {{'kiln.custom_backward' op must have one result per floating-point input (1), got 2}}
  %dx, %di = kiln.custom_backward "g" from "k.cu" inputs(%x, %i) outputs(%y) output_grads(%y)
      : (tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %dx, %di : tensor<4xf32>, tensor<4xi32>
}

// -----

func.func @backward_result_type(%i: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'kiln.custom_backward' op result #0 (the gradient of input #1) must have type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %dx = kiln.custom_backward "g" from "k.cu" inputs(%i, %x) outputs(%y) output_grads(%y)
      : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %dx : tensor<4xf16>
}
