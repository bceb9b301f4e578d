// The gradient of a [32768, 1024] bf16 embedding table from 16384 lookups
// (B8 x T2048 tokens): what the backward pass of a language model's token
// embedding computes. kiln.embedding_backward is the op the autodiff rule of
// kiln.embedding emits; compiled with `kilnc --inference --function f`, the
// forward entry is exactly this gradient.
func.func @f(%g: tensor<8x2048x1024xbf16> {kiln.name = "g"},
             %tokens: tensor<8x2048xi32> {kiln.name = "tokens"})
    -> (tensor<32768x1024xbf16> {kiln.name = "dtable"}) {
  %d = kiln.embedding_backward %g, %tokens
      : tensor<8x2048x1024xbf16>, tensor<8x2048xi32> -> tensor<32768x1024xbf16>
  return %d : tensor<32768x1024xbf16>
}
