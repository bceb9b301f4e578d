// kiln.concat of a constant and a computed value, fused with an add (a
// ViT's class token before its position embedding, as ONNX exports it for
// inference): the element-wise kernel computes the product's part where
// the concat reads it and the constant's elsewhere.
func.func @loss(
    %w: tensor<6x4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "w"},
    %pos: tensor<1x4x4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "pos"},
    %x: tensor<2x3x6xf32> {kiln.name = "x"},
    %t: tensor<2x4x4xf32> {kiln.name = "t"}) -> tensor<f32> {
  %p = kiln.matmul %x, %w : tensor<2x3x6xf32>, tensor<6x4xf32>
  %cls = kiln.constant dense<[[[0.5, -1.0, 2.0, 0.25]], [[1.5, 3.0, -0.5, 0.75]]]> : tensor<2x1x4xf32>
  %j = kiln.concat %cls, %p dim = 1 : tensor<2x1x4xf32>, tensor<2x3x4xf32>
  %y = kiln.add %j, %pos : tensor<2x4x4xf32>, tensor<1x4x4xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x4x4xf32>
  return %loss : tensor<f32>
}
