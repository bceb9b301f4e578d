// kiln.embedding of a constant table at indices normalised from negative
// ones (ONNX Gather on an initializer, as in an inference export), fused
// with the add of a position table: one element-wise kernel that computes
// each index where it reads it and takes the table's element from a copy
// in the kernel.
func.func @loss(
    %pos: tensor<5x4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "pos"},
    %tokens: tensor<2x5xi32> {kiln.name = "tokens"},
    %t: tensor<2x5x4xf32> {kiln.name = "t"}) -> tensor<f32> {
  %table = kiln.constant dense<[[0.5, -1.0, 2.0, 0.25], [1.5, 3.0, -0.5, 0.75], [-2.0, 0.125, 1.0, 4.0]]> : tensor<3x4xf32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %three = kiln.constant dense<3> : tensor<i32>
  %neg = kiln.compare lt, %tokens, %zero : tensor<2x5xi32>, tensor<i32>
  %up = kiln.add %tokens, %three : tensor<2x5xi32>, tensor<i32>
  %idx = kiln.select %neg, %up, %tokens : tensor<2x5xi1>, tensor<2x5xi32>, tensor<2x5xi32>
  %e = kiln.embedding %table, %idx : tensor<3x4xf32>, tensor<2x5xi32>
  %y = kiln.add %e, %pos : tensor<2x5x4xf32>, tensor<5x4xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x5x4xf32>
  return %loss : tensor<f32>
}
