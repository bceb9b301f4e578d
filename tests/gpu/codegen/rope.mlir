// kiln.rope of fusion inputs on the vector path (each step's elements and
// their rotation partners in registers): bf16 and f16 at head dims 64 and
// 128, the inverse rotation, a position offset past 2^16, and f32 at head
// dim 8 (a step of 4 inside each half).
func.func @f(%q: tensor<2x64x4x64xbf16> {kiln.name = "q"},
             %k: tensor<2x64x4x64xbf16> {kiln.name = "k"},
             %h: tensor<1x32x2x128xf16> {kiln.name = "h"},
             %s: tensor<2x6x3x8xf32> {kiln.name = "s"})
    -> (tensor<2x64x4x64xbf16> {kiln.name = "q_rot"},
        tensor<2x64x4x64xbf16> {kiln.name = "k_back"},
        tensor<1x32x2x128xf16> {kiln.name = "h_rot"},
        tensor<2x6x3x8xf32> {kiln.name = "s_rot"}) {
  %0 = kiln.rope %q : tensor<2x64x4x64xbf16>
  %1 = kiln.rope %k inverse : tensor<2x64x4x64xbf16>
  %2 = kiln.rope %h theta = 500000.0 position_offset = 70000 : tensor<1x32x2x128xf16>
  %3 = kiln.rope %s theta = 100.0 inverse : tensor<2x6x3x8xf32>
  return %0, %1, %2, %3 : tensor<2x64x4x64xbf16>, tensor<2x64x4x64xbf16>, tensor<1x32x2x128xf16>, tensor<2x6x3x8xf32>
}
