// A batch norm over zero channels (zero_elements.mlir): its statistics
// kernels have no blocks, and their split of the reduced range is the whole
// range (it divided by the zero blocks).
func.func @loss(
    %x: tensor<4x5x7x0xbf16> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %g: tensor<0xbf16> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %b: tensor<0xbf16> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %t: tensor<4x5x7x0xbf16> {kiln.name = "t"}) -> tensor<bf16> {
  %y, %m, %v = kiln.batch_norm %x, %g, %b dim = 3 eps = 1.0e-05 : tensor<4x5x7x0xbf16>, tensor<0xbf16>, tensor<0xbf16>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<4x5x7x0xbf16>
  return %loss : tensor<bf16>
}
