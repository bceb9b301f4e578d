// GEMM + bias + GELU(tanh) in bf16: y = gelu(x @ w + b) with x [M, K] = [512, 1024],
// w [K, N] = [1024, 4096], b [N]; the name is M x K x N. Compiled for
// inference: kilnc --inference --function f.
func.func @f(%x: tensor<512x1024xbf16> {kiln.name = "x"},
             %w: tensor<1024x4096xbf16> {kiln.name = "w"},
             %b: tensor<4096xbf16> {kiln.name = "b"})
    -> (tensor<512x4096xbf16> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<512x1024xbf16>, tensor<1024x4096xbf16>
  %1 = kiln.add %0, %b : tensor<512x4096xbf16>, tensor<4096xbf16>
  %2 = kiln.gelu %1 approximate = tanh : tensor<512x4096xbf16>
  return %2 : tensor<512x4096xbf16>
}
