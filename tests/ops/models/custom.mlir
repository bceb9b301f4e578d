// kiln.custom (and, in training, kiln.custom_backward) with the kernel file
// custom.cu beside this model. The CPU reference cannot run a user kernel,
// so the f64 GPU cases skip it; tests/gpu/custom checks user kernels on the
// GPU against finite differences instead.
// gpu-modes: none
func.func @loss(
    %x: tensor<6x10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<10xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "w"},
    %t: tensor<6x10xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y = kiln.custom "cubic_gate" from "custom.cu" (%x, %w) backward "cubic_gate_grad"
      : (tensor<6x10xf32>, tensor<10xf32>) -> tensor<6x10xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<6x10xf32>
  return %loss : tensor<f32>
}
