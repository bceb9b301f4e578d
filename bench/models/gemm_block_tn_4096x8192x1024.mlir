// y = a^T @ b, bf16, M x K x N = 4096 x 8192 x 1024:
// the weight gradient of the down projection (1 per training step of the transformer block).
// Written by bench/models/gen_block_gemms.py; compiled with
// `kilnc --inference --function f`, timed by bench/run.py against cuBLAS.
func.func @f(%a: tensor<8192x4096xbf16> {kiln.name = "a"}, %b: tensor<8192x1024xbf16> {kiln.name = "b"})
    -> (tensor<4096x1024xbf16> {kiln.name = "y"}) {
  %y = kiln.matmul %a, %b transpose_lhs : tensor<8192x4096xbf16>, tensor<8192x1024xbf16>
  return %y : tensor<4096x1024xbf16>
}
