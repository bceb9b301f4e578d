// y = a @ b^T, bf16, M x K x N = 8192 x 4096 x 1024:
// the input gradient of the up projection (1 per training step of the transformer block).
// Written by bench/models/gen_block_gemms.py; compiled with
// `kilnc --inference --function f`, timed by bench/run.py against cuBLAS.
func.func @f(%a: tensor<8192x4096xbf16> {kiln.name = "a"}, %b: tensor<1024x4096xbf16> {kiln.name = "b"})
    -> (tensor<8192x1024xbf16> {kiln.name = "y"}) {
  %y = kiln.matmul %a, %b transpose_rhs : tensor<8192x4096xbf16>, tensor<1024x4096xbf16>
  return %y : tensor<8192x1024xbf16>
}
