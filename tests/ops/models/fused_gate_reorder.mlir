// Parameters whose gate blocks are reordered by slices and concats before
// use (an LSTM or GRU exported from PyTorch to ONNX), with a transposed
// head: their gradients are pads of slices of the used gradient, added,
// which the optimizer's kernel takes and computes where it reads them.
func.func @loss(
    %w: tensor<16x6xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "w"},
    %b: tensor<16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "b"},
    %head: tensor<3x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "head"},
    %x: tensor<8x6xf32> {kiln.name = "x"},
    %t: tensor<8x3xf32> {kiln.name = "t"}) -> tensor<f32> {
  %w0 = kiln.slice %w start = [0, 0] limit = [4, 6] step = [1, 1] : tensor<16x6xf32>
  %w1 = kiln.slice %w start = [4, 0] limit = [8, 6] step = [1, 1] : tensor<16x6xf32>
  %w2 = kiln.slice %w start = [8, 0] limit = [16, 6] step = [1, 1] : tensor<16x6xf32>
  %wr = kiln.concat %w1, %w0, %w2 dim = 0 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<8x6xf32>
  %b0 = kiln.slice %b start = [0] limit = [4] step = [1] : tensor<16xf32>
  %b1 = kiln.slice %b start = [4] limit = [8] step = [1] : tensor<16xf32>
  %b2 = kiln.slice %b start = [8] limit = [16] step = [1] : tensor<16xf32>
  %br = kiln.concat %b2, %b1, %b0 dim = 0 : tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
  %z = kiln.matmul %x, %wr transpose_rhs : tensor<8x6xf32>, tensor<16x6xf32>
  %y = kiln.add %z, %br : tensor<8x16xf32>, tensor<16xf32>
  %a = kiln.tanh %y : tensor<8x16xf32>
  %ht = kiln.transpose %head perm = [1, 0] : tensor<3x16xf32>
  %o = kiln.matmul %a, %ht : tensor<8x16xf32>, tensor<16x3xf32>
  %loss = kiln.mse_loss %o, %t reduction = mean : tensor<8x3xf32>
  return %loss : tensor<f32>
}
