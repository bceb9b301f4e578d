// Exact f32 GEMMs of the shapes a training step produces.
// - dw, dw_out: weight gradients over all 128 rows of a [4, 32] batch
//   (transposed lhs), small and deep: K slices within one block.
// - q, k, v: three projections of one input, one grouped launch (k with a
//   bias); the weight gradients dwq, dwk, dwv of one activation, another.
// - p, dp: a read-out with bias whose epilogue also computes the mean
//   squared error's gradient (the target negated per element, constants).
// - dh: a product times tanh's derivative computed in its epilogue.
// - da: the sum of three products (the gradient of the input of q, k and v),
//   one product over their concatenated K.
func.func @f(%x: tensor<128x64xf32> {kiln.name = "x"}, %dy: tensor<128x64xf32> {kiln.name = "dy"},
             %dp0: tensor<128x1xf32> {kiln.name = "dp0"},
             %a: tensor<4x32x64xf32> {kiln.name = "a"}, %wq: tensor<64x64xf32> {kiln.name = "wq"},
             %wk: tensor<64x64xf32> {kiln.name = "wk"}, %wv: tensor<64x64xf32> {kiln.name = "wv"},
             %bk: tensor<64xf32> {kiln.name = "bk"},
             %gq: tensor<128x64xf32> {kiln.name = "gq"}, %gk: tensor<128x64xf32> {kiln.name = "gk"},
             %gv: tensor<128x64xf32> {kiln.name = "gv"},
             %wo: tensor<64x1xf32> {kiln.name = "wo"}, %bo: tensor<1xf32> {kiln.name = "bo"},
             %y: tensor<4x32x1xf32> {kiln.name = "y"},
             %u: tensor<128x64xf32> {kiln.name = "u"}, %wd: tensor<64x64xf32> {kiln.name = "wd"},
             %eq: tensor<4x32x64xf32> {kiln.name = "eq"}, %ek: tensor<4x32x64xf32> {kiln.name = "ek"},
             %ev: tensor<4x32x64xf32> {kiln.name = "ev"})
    -> (tensor<64x64xf32> {kiln.name = "dw"}, tensor<64x1xf32> {kiln.name = "dw_out"},
        tensor<4x32x64xf32> {kiln.name = "q"}, tensor<4x32x64xf32> {kiln.name = "k"},
        tensor<4x32x64xf32> {kiln.name = "v"},
        tensor<64x64xf32> {kiln.name = "dwq"}, tensor<64x64xf32> {kiln.name = "dwk"},
        tensor<64x64xf32> {kiln.name = "dwv"},
        tensor<4x32x1xf32> {kiln.name = "p"}, tensor<4x32x1xf32> {kiln.name = "dp"},
        tensor<128x64xf32> {kiln.name = "dh"}, tensor<4x32x64xf32> {kiln.name = "da"}) {
  %0 = kiln.matmul %x, %dy transpose_lhs : tensor<128x64xf32>, tensor<128x64xf32>
  %1 = kiln.matmul %x, %dp0 transpose_lhs : tensor<128x64xf32>, tensor<128x1xf32>
  %q = kiln.matmul %a, %wq : tensor<4x32x64xf32>, tensor<64x64xf32>
  %k0 = kiln.matmul %a, %wk : tensor<4x32x64xf32>, tensor<64x64xf32>
  %k = kiln.add %k0, %bk : tensor<4x32x64xf32>, tensor<64xf32>
  %v = kiln.matmul %a, %wv : tensor<4x32x64xf32>, tensor<64x64xf32>
  %dwq = kiln.matmul %x, %gq transpose_lhs : tensor<128x64xf32>, tensor<128x64xf32>
  %dwk = kiln.matmul %x, %gk transpose_lhs : tensor<128x64xf32>, tensor<128x64xf32>
  %dwv = kiln.matmul %x, %gv transpose_lhs : tensor<128x64xf32>, tensor<128x64xf32>
  %m = kiln.matmul %a, %wo : tensor<4x32x64xf32>, tensor<64x1xf32>
  %p = kiln.add %m, %bo : tensor<4x32x1xf32>, tensor<1xf32>
  %minus = kiln.constant dense<-1.0> : tensor<f32>
  %ny = kiln.mul %y, %minus : tensor<4x32x1xf32>, tensor<f32>
  %d = kiln.add %p, %ny : tensor<4x32x1xf32>, tensor<4x32x1xf32>
  %scale = kiln.constant dense<1.5625e-02> : tensor<f32>
  %dp = kiln.mul %d, %scale : tensor<4x32x1xf32>, tensor<f32>
  %t = kiln.tanh %u : tensor<128x64xf32>
  %h = kiln.matmul %dy, %wd transpose_rhs : tensor<128x64xf32>, tensor<64x64xf32>
  %tt = kiln.mul %t, %t : tensor<128x64xf32>, tensor<128x64xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %dt = kiln.sub %one, %tt : tensor<f32>, tensor<128x64xf32>
  %dh = kiln.mul %h, %dt : tensor<128x64xf32>, tensor<128x64xf32>
  %daq = kiln.matmul %eq, %wq transpose_rhs : tensor<4x32x64xf32>, tensor<64x64xf32>
  %dak = kiln.matmul %ek, %wk transpose_rhs : tensor<4x32x64xf32>, tensor<64x64xf32>
  %dav = kiln.matmul %ev, %wv transpose_rhs : tensor<4x32x64xf32>, tensor<64x64xf32>
  %da0 = kiln.add %dav, %dak : tensor<4x32x64xf32>, tensor<4x32x64xf32>
  %da = kiln.add %da0, %daq : tensor<4x32x64xf32>, tensor<4x32x64xf32>
  return %0, %1, %q, %k, %v, %dwq, %dwk, %dwv, %p, %dp, %dh, %da
      : tensor<64x64xf32>, tensor<64x1xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>,
        tensor<4x32x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>,
        tensor<4x32x1xf32>, tensor<4x32x1xf32>, tensor<128x64xf32>, tensor<4x32x64xf32>
}
