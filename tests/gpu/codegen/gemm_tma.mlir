// The TMA kernel's grouped and summed problems, as a transformer's
// projections and their gradients meet them: q, k and v of one input (one
// launch, outputs stacked, a bias on one), the input gradient of the three
// (one product over their concatenated K, then a bias and GELU), and the
// weight gradients x^T dq, x^T dk, x^T dv (M-major lhs, split K over 1000
// rows). M, N and K end inside tiles. Last, a product of more tiles than
// two per SM and a deep K, so that each block's consumers take several
// items and skip each other's stages (the ping-pong schedule). Then a
// transformer MLP's two epilogues: one product with two results (the
// pre-activation and its GELU), and one scaled by a tensor of its own shape
// (as the GELU's gradient scales the input gradient), both ending inside
// tiles.
func.func @f(%x: tensor<1000x600xbf16> {kiln.name = "x"},
             %wq: tensor<600x520xbf16> {kiln.name = "wq"}, %wk: tensor<600x520xbf16> {kiln.name = "wk"},
             %wv: tensor<600x520xbf16> {kiln.name = "wv"}, %bk: tensor<520xbf16> {kiln.name = "bk"},
             %dq: tensor<1000x520xbf16> {kiln.name = "dq"}, %dk: tensor<1000x520xbf16> {kiln.name = "dk"},
             %dv: tensor<1000x520xbf16> {kiln.name = "dv"}, %bx: tensor<600xbf16> {kiln.name = "bx"},
             %h: tensor<4x250x264xf16> {kiln.name = "h"}, %u: tensor<264x392xf16> {kiln.name = "u"},
             %a: tensor<2048x1000xbf16> {kiln.name = "a"}, %b: tensor<1000x2304xbf16> {kiln.name = "b"},
             %m: tensor<1000x1024xbf16> {kiln.name = "m"}, %wu: tensor<1024x776xbf16> {kiln.name = "wu"},
             %bu: tensor<776xbf16> {kiln.name = "bu"}, %dy: tensor<1000x512xbf16> {kiln.name = "dy"},
             %wd: tensor<776x512xbf16> {kiln.name = "wd"}, %s: tensor<1000x776xbf16> {kiln.name = "s"})
    -> (tensor<1000x520xbf16> {kiln.name = "q"}, tensor<1000x520xbf16> {kiln.name = "k"},
        tensor<1000x520xbf16> {kiln.name = "v"}, tensor<1000x600xbf16> {kiln.name = "dx"},
        tensor<600x520xbf16> {kiln.name = "dwq"}, tensor<600x520xbf16> {kiln.name = "dwk"},
        tensor<600x520xbf16> {kiln.name = "dwv"}, tensor<4x250x392xf16> {kiln.name = "hu"},
        tensor<2048x2304xbf16> {kiln.name = "ab"}, tensor<1000x776xbf16> {kiln.name = "up"},
        tensor<1000x776xbf16> {kiln.name = "act"}, tensor<1000x776xbf16> {kiln.name = "ds"}) {
  %q = kiln.matmul %x, %wq : tensor<1000x600xbf16>, tensor<600x520xbf16>
  %k0 = kiln.matmul %x, %wk : tensor<1000x600xbf16>, tensor<600x520xbf16>
  %k = kiln.add %k0, %bk : tensor<1000x520xbf16>, tensor<520xbf16>
  %v = kiln.matmul %x, %wv : tensor<1000x600xbf16>, tensor<600x520xbf16>
  %g0 = kiln.matmul %dq, %wq transpose_rhs : tensor<1000x520xbf16>, tensor<600x520xbf16>
  %g1 = kiln.matmul %dk, %wk transpose_rhs : tensor<1000x520xbf16>, tensor<600x520xbf16>
  %g2 = kiln.matmul %dv, %wv transpose_rhs : tensor<1000x520xbf16>, tensor<600x520xbf16>
  %s0 = kiln.add %g0, %g1 : tensor<1000x600xbf16>, tensor<1000x600xbf16>
  %s1 = kiln.add %s0, %g2 : tensor<1000x600xbf16>, tensor<1000x600xbf16>
  %s2 = kiln.add %s1, %bx : tensor<1000x600xbf16>, tensor<600xbf16>
  %dx = kiln.gelu %s2 approximate = tanh : tensor<1000x600xbf16>
  %dwq = kiln.matmul %x, %dq transpose_lhs : tensor<1000x600xbf16>, tensor<1000x520xbf16>
  %dwk = kiln.matmul %x, %dk transpose_lhs : tensor<1000x600xbf16>, tensor<1000x520xbf16>
  %dwv = kiln.matmul %x, %dv transpose_lhs : tensor<1000x600xbf16>, tensor<1000x520xbf16>
  // A batch that shares the rhs, folded into 1000 rows, f16.
  %hu = kiln.matmul %h, %u : tensor<4x250x264xf16>, tensor<264x392xf16>
  %ab = kiln.matmul %a, %b : tensor<2048x1000xbf16>, tensor<1000x2304xbf16>
  %u0 = kiln.matmul %m, %wu : tensor<1000x1024xbf16>, tensor<1024x776xbf16>
  %up = kiln.add %u0, %bu : tensor<1000x776xbf16>, tensor<776xbf16>
  %act = kiln.gelu %up approximate = tanh : tensor<1000x776xbf16>
  %d0 = kiln.matmul %dy, %wd transpose_rhs : tensor<1000x512xbf16>, tensor<776x512xbf16>
  %ds = kiln.mul %d0, %s : tensor<1000x776xbf16>, tensor<1000x776xbf16>
  return %q, %k, %v, %dx, %dwq, %dwk, %dwv, %hu, %ab, %up, %act, %ds : tensor<1000x520xbf16>, tensor<1000x520xbf16>,
      tensor<1000x520xbf16>, tensor<1000x600xbf16>, tensor<600x520xbf16>, tensor<600x520xbf16>,
      tensor<600x520xbf16>, tensor<4x250x392xf16>, tensor<2048x2304xbf16>, tensor<1000x776xbf16>,
      tensor<1000x776xbf16>, tensor<1000x776xbf16>
}
