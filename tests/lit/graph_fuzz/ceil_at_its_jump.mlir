// A parameter on a jump of the loss: the fuzzer drew every element of a
// bf16 parameter onto a ceil's integer (bf16 has few values near 0.5), and
// central differences disagreed with the gradient in both directions, since
// each crosses the jump (graph 1796624847:62, reduced from 15 ops to 7;
// here with f32 values, as the central difference evaluates it). kilnc and
// the gradients were right: ceil's gradient is 0, and at p = -0.5 the loss
// jumps, so no gradient is defined there. The fuzzer now leaves such a
// graph unchecked when a thousand times shorter direction moves the loss as
// much (selftest.py, "a parameter on a jump").
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.sgd.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" -o %t.mlir
// RUN: python3 %S/../kiln-ref/Inputs/write_f32_safetensors.py %t.on.safetensors p=-0.5,-0.5,-0.5,-0.5 x=0.25,0.25,0.25,0.25
// RUN: python3 %S/../kiln-ref/Inputs/write_f32_safetensors.py %t.above.safetensors p=-0.4999,-0.5,-0.5,-0.5 x=0.25,0.25,0.25,0.25
// RUN: kiln-ref %t.mlir --function forward_backward --inputs %t.on.safetensors --precision f64 --print | FileCheck %s --check-prefix=ON
// RUN: kiln-ref %t.mlir --function forward --inputs %t.above.safetensors --precision f64 --print | FileCheck %s --check-prefix=ABOVE

// ON: loss: tensor<f32> = [0.25]
// ON: grad.p: tensor<2x2xf32> = [0, 0, 0, 0]
// ABOVE: loss: tensor<f32> = [0.75]
func.func @loss(
    %p: tensor<2x2xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p"},
    %x: tensor<2x2xf32> {kiln.name = "x"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %half = kiln.constant dense<0.5> : tensor<f32>
  %shifted = kiln.add %p, %half : tensor<2x2xf32>, tensor<f32>
  %up = kiln.ceil %shifted : tensor<2x2xf32>
  %squares = kiln.mse_loss %up, %x reduction = sum : tensor<2x2xf32>
  return %squares : tensor<f32>
}
