// RUN: kiln-opt %s --kiln-autodiff -split-input-file -verify-diagnostics

// kiln cannot differentiate CUDA: without a backward entry, a custom op that
// the loss is differentiated through is the user's error, at their op.
func.func @loss(%x: tensor<4xf32> {kiln.param = #kiln.init<normal>, kiln.name = "x"}) -> tensor<f32> {
  // expected-error @+1 {{'kiln.custom' op has no 'backward' function, but the loss is differentiated through it: name the backward template of "k.cu" with `backward "NAME"`}}
  %y = kiln.custom "fwd" from "k.cu" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  %l = kiln.reduce_sum %y dims = [0] : tensor<4xf32>
  return %l : tensor<f32>
}
