// The optimizer kernel of a step that also updates an f16 parameter takes
// the gradient of a slice-then-mean parameter (a division, a broadcast and a
// pad) into its group; no kernel family took that ("no GPU kernel for
// 'kiln.div' yet: it needs a kernel") until the loop kernel took every group
// of element-wise, layout and gather ops. Found by the graph fuzzer
// (tests/fuzz/graph).
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.cu
func.func @loss(
    %p: tensor<7xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p"},
    %x: tensor<7x1x1x7xf16> {kiln.name = "x"},
    %w: tensor<1x1x1x1xf16> {kiln.param = #kiln.init<kaiming>, kiln.name = "w"},
    %t: tensor<7x1x1x5xf16> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %s = kiln.slice %p start = [0] limit = [6] step = [1] : tensor<7xf32>
  %m = kiln.reduce_mean %s dims = [0] : tensor<6xf32>
  %y = kiln.conv2d %x, %w layout = nchw stride = [2, 2] padding = [0, 0, 0, 2] : tensor<7x1x1x7xf16>, tensor<1x1x1x1xf16>
  %e = kiln.mse_loss %y, %t reduction = sum : tensor<7x1x1x5xf16>
  %e32 = kiln.cast %e : tensor<f16> to tensor<f32>
  %loss = kiln.add %m, %e32 : tensor<f32>, tensor<f32>
  return %loss : tensor<f32>
}
