// GEMM + bias + GELU(tanh) in bf16: y = gelu(x @ w + b) with x [M, K] = [4096, 4096],
// w [K, N] = [4096, 4096], b [N]; the name is M x K x N. Compiled for
// inference: kilnc --inference --function f.
func.func @f(%x: tensor<4096x4096xbf16> {kiln.name = "x"},
             %w: tensor<4096x4096xbf16> {kiln.name = "w"},
             %b: tensor<4096xbf16> {kiln.name = "b"})
    -> (tensor<4096x4096xbf16> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>
  %1 = kiln.add %0, %b : tensor<4096x4096xbf16>, tensor<4096xbf16>
  %2 = kiln.gelu %1 approximate = tanh : tensor<4096x4096xbf16>
  return %2 : tensor<4096x4096xbf16>
}
