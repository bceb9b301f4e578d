// Reductions written from primitives over bf16 and f16 storage (f32
// compute, one rounding per op as the reference), and a multi-tensor norm
// small enough for a single block.
func.func @f(%x: tensor<5x70xbf16> {kiln.name = "x"}, %g: tensor<70xbf16> {kiln.name = "g"},
             %y: tensor<3x9x33xf16> {kiln.name = "y"}, %a: tensor<40xf32> {kiln.name = "a"},
             %c: tensor<f32> {kiln.name = "c"})
    -> (tensor<5x70xbf16> {kiln.name = "softmax"}, tensor<5x70xbf16> {kiln.name = "rms"},
        tensor<3x9x33xf16> {kiln.name = "log_softmax"}, tensor<f16> {kiln.name = "mse"},
        tensor<f32> {kiln.name = "norm"}) {
  %m = kiln.reduce_max %x dims = [1] keepdim : tensor<5x70xbf16>
  %d = kiln.sub %x, %m : tensor<5x70xbf16>, tensor<5x1xbf16>
  %e = kiln.exp %d : tensor<5x70xbf16>
  %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<5x70xbf16>
  %sm = kiln.div %e, %s : tensor<5x70xbf16>, tensor<5x1xbf16>
  %sq = kiln.mul %x, %x : tensor<5x70xbf16>, tensor<5x70xbf16>
  %ms = kiln.reduce_mean %sq dims = [1] keepdim : tensor<5x70xbf16>
  %eps = kiln.constant dense<1.0e-5> : tensor<bf16>
  %t = kiln.add %ms, %eps : tensor<5x1xbf16>, tensor<bf16>
  %r = kiln.rsqrt %t : tensor<5x1xbf16>
  %xn = kiln.mul %x, %r : tensor<5x70xbf16>, tensor<5x1xbf16>
  %rms = kiln.mul %xn, %g : tensor<5x70xbf16>, tensor<70xbf16>
  %ym = kiln.reduce_max %y dims = [2] keepdim : tensor<3x9x33xf16>
  %yd = kiln.sub %y, %ym : tensor<3x9x33xf16>, tensor<3x9x1xf16>
  %ye = kiln.exp %yd : tensor<3x9x33xf16>
  %ys = kiln.reduce_sum %ye dims = [2] keepdim : tensor<3x9x33xf16>
  %yl = kiln.log %ys : tensor<3x9x1xf16>
  %ls = kiln.sub %yd, %yl : tensor<3x9x33xf16>, tensor<3x9x1xf16>
  %y2 = kiln.mul %y, %y : tensor<3x9x33xf16>, tensor<3x9x33xf16>
  %mse = kiln.reduce_mean %y2 dims = [0, 1, 2] : tensor<3x9x33xf16>
  %a2 = kiln.mul %a, %a : tensor<40xf32>, tensor<40xf32>
  %na = kiln.reduce_sum %a2 dims = [0] : tensor<40xf32>
  %gf = kiln.cast %g : tensor<70xbf16> to tensor<70xf32>
  %g2 = kiln.mul %gf, %gf : tensor<70xf32>, tensor<70xf32>
  %ng = kiln.reduce_sum %g2 dims = [0] : tensor<70xf32>
  %c2 = kiln.mul %c, %c : tensor<f32>, tensor<f32>
  %n1 = kiln.add %na, %ng : tensor<f32>, tensor<f32>
  %n2 = kiln.add %n1, %c2 : tensor<f32>, tensor<f32>
  %norm = kiln.sqrt %n2 : tensor<f32>
  return %sm, %rms, %ls, %mse, %norm
      : tensor<5x70xbf16>, tensor<5x70xbf16>, tensor<3x9x33xf16>, tensor<f16>, tensor<f32>
}
