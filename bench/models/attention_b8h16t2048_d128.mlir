// Attention, B8 H16 T2048 D128 bf16, not causal, scale 1/sqrt(D).
// Written by bench/models/gen_attention.py (bench/bench_attention.py's ATTENTION_SHAPES).
// Compiled with `kilnc --inference --function f`, the artifact has the
// entries that bench/run.py times:
//  - forward: o = attention(q, k, v);
//  - fwdbwd: o and, for the gradient g of o, dq, dk and dv (what kiln's
//    autodiff emits for it).
func.func @f(%q: tensor<8x16x2048x128xbf16> {kiln.name = "q"}, %k: tensor<8x16x2048x128xbf16> {kiln.name = "k"},
             %v: tensor<8x16x2048x128xbf16> {kiln.name = "v"}) -> (tensor<8x16x2048x128xbf16> {kiln.name = "o"}) {
  %o = kiln.attention %q, %k, %v : tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>
  return %o : tensor<8x16x2048x128xbf16>
}

func.func @fwdbwd(%q: tensor<8x16x2048x128xbf16> {kiln.name = "q"}, %k: tensor<8x16x2048x128xbf16> {kiln.name = "k"},
                  %v: tensor<8x16x2048x128xbf16> {kiln.name = "v"}, %g: tensor<8x16x2048x128xbf16> {kiln.name = "g"})
    -> (tensor<8x16x2048x128xbf16> {kiln.name = "o"}, tensor<8x16x2048x128xbf16> {kiln.name = "dq"}, tensor<8x16x2048x128xbf16> {kiln.name = "dk"},
        tensor<8x16x2048x128xbf16> {kiln.name = "dv"}) {
  %o = kiln.attention %q, %k, %v : tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>
  %d:3 = kiln.attention_backward %q, %k, %v, %o, %g : tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>
  return %o, %d#0, %d#1, %d#2 : tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>, tensor<8x16x2048x128xbf16>
}
