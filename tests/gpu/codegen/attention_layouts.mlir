// Attention forward and backward reading q, k, v, the output and its
// gradient as [B, T, H, D] rows and writing [B, T, H, D] results: the
// transposes join the attention fusions (strided kernels), the sine block's
// shapes, f32.
func.func @f(%q0: tensor<4x32x4x16xf32> {kiln.name = "q"}, %k0: tensor<4x32x4x16xf32> {kiln.name = "k"},
             %v0: tensor<4x32x4x16xf32> {kiln.name = "v"}, %do0: tensor<4x32x4x16xf32> {kiln.name = "d_out"})
    -> (tensor<4x32x4x16xf32> {kiln.name = "out"}, tensor<4x32x4x16xf32> {kiln.name = "d_query"},
        tensor<4x32x4x16xf32> {kiln.name = "d_key"}, tensor<4x32x4x16xf32> {kiln.name = "d_value"}) {
  %q = kiln.transpose %q0 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %k = kiln.transpose %k0 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %v = kiln.transpose %v0 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %o = kiln.attention %q, %k, %v causal
      : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
  %o1 = kiln.transpose %o perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  %do = kiln.transpose %do0 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal
      : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
  %dq1 = kiln.transpose %dq perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  %dk1 = kiln.transpose %dk perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  %dv1 = kiln.transpose %dv perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  return %o1, %dq1, %dk1, %dv1
      : tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>, tensor<4x32x4x16xf32>
}
