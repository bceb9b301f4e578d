// Chains of element-wise and layout ops that the pointwise kernels compute
// at remapped positions (one kernel each): rope's backward after a
// transpose, a transposed reshape of a computed value, and a slice of a
// flip of a sum; f32.
func.func @f(%g: tensor<4x4x32x16xf32> {kiln.name = "g"}, %y: tensor<6x4xf32> {kiln.name = "y"},
             %a: tensor<8x6xf32> {kiln.name = "a"}, %b: tensor<6xf32> {kiln.name = "b"})
    -> (tensor<4x32x4x16xf32> {kiln.name = "rope_grad"}, tensor<3x8xf32> {kiln.name = "reshaped"},
        tensor<4x4xf32> {kiln.name = "sliced"}) {
  %s = kiln.constant dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]> : tensor<16xf32>
  %t = kiln.transpose %g perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  %m = kiln.mul %t, %s : tensor<4x32x4x16xf32>, tensor<16xf32>
  %r = kiln.rope %m : tensor<4x32x4x16xf32>
  %d = kiln.mul %r, %s : tensor<4x32x4x16xf32>, tensor<16xf32>
  %n = kiln.neg %y : tensor<6x4xf32>
  %rs = kiln.reshape %n : tensor<6x4xf32> -> tensor<8x3xf32>
  %tr = kiln.transpose %rs perm = [1, 0] : tensor<8x3xf32>
  %ab = kiln.add %a, %b : tensor<8x6xf32>, tensor<6xf32>
  %fl = kiln.flip %ab dims = [1] : tensor<8x6xf32>
  %sl = kiln.slice %fl start = [0, 1] limit = [8, 5] step = [2, 1] : tensor<8x6xf32>
  return %d, %tr, %sl : tensor<4x32x4x16xf32>, tensor<3x8xf32>, tensor<4x4xf32>
}
