// kiln.batch_norm over the channels of NCHW (dim 1) with running statistics
// (model state): training updates them, forward normalises with them.
func.func @loss(
    %x: tensor<4x6x5x7xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %g: tensor<6xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %b: tensor<6xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %rm: tensor<6xf32> {kiln.state = #kiln.init<zeros>, kiln.name = "running_mean"},
    %rv: tensor<6xf32> {kiln.state = #kiln.init<ones>, kiln.name = "running_var"},
    %t: tensor<4x6x5x7xf32> {kiln.name = "t"}) -> tensor<f32> {
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.1 dim = 1 eps = 1.0e-05 : tensor<4x6x5x7xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x6x5x7xf32>
  return %loss : tensor<f32>
}
