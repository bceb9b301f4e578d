func.func @simt_tile(%q: tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<simt, tile = 48>} : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> {
  ^bb0(%a: tensor<1x2x32x32xf32>, %b: tensor<1x2x32x32xf32>, %c: tensor<1x2x32x32xf32>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>
    kiln.yield %1 : tensor<1x2x32x32xf32>
  }
  return %0 : tensor<1x2x32x32xf32>
}
// -----
func.func @wgmma_f32(%q: tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x128x4>} : (tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>) -> tensor<1x2x32x32xf32> {
  ^bb0(%a: tensor<1x2x32x32xf32>, %b: tensor<1x2x32x32xf32>, %c: tensor<1x2x32x32xf32>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>, tensor<1x2x32x32xf32>
    kiln.yield %1 : tensor<1x2x32x32xf32>
  }
  return %0 : tensor<1x2x32x32xf32>
}
// -----
func.func @backward_form(%q: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dq = 128x64x4, dkdv = 128x64x4>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  ^bb0(%a: tensor<1x2x128x64xbf16>, %b: tensor<1x2x128x64xbf16>, %c: tensor<1x2x128x64xbf16>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
    kiln.yield %1 : tensor<1x2x128x64xbf16>
  }
  return %0 : tensor<1x2x128x64xbf16>
}
// -----
func.func @streamed_rows(%q: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x256x2>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  ^bb0(%a: tensor<1x2x128x64xbf16>, %b: tensor<1x2x128x64xbf16>, %c: tensor<1x2x128x64xbf16>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
    kiln.yield %1 : tensor<1x2x128x64xbf16>
  }
  return %0 : tensor<1x2x128x64xbf16>
}
// -----
func.func @pingpong_rows(%q: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 64x128x4, pingpong>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  ^bb0(%a: tensor<1x2x128x64xbf16>, %b: tensor<1x2x128x64xbf16>, %c: tensor<1x2x128x64xbf16>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
    kiln.yield %1 : tensor<1x2x128x64xbf16>
  }
  return %0 : tensor<1x2x128x64xbf16>
}
// -----
func.func @shared(%q: tensor<1x2x128x256xbf16>) -> tensor<1x2x128x256xbf16> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, forward = 128x128x4>} : (tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>) -> tensor<1x2x128x256xbf16> {
  ^bb0(%a: tensor<1x2x128x256xbf16>, %b: tensor<1x2x128x256xbf16>, %c: tensor<1x2x128x256xbf16>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
    kiln.yield %1 : tensor<1x2x128x256xbf16>
  }
  return %0 : tensor<1x2x128x256xbf16>
}
// -----
func.func @fused_no_lse(%q: tensor<1x2x128x64xbf16>) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %0:3 = kiln.fusion "attention" (%q, %q, %q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dkdv = 128x64x2, fused>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  ^bb0(%a: tensor<1x2x128x64xbf16>, %b: tensor<1x2x128x64xbf16>, %c: tensor<1x2x128x64xbf16>, %d: tensor<1x2x128x64xbf16>, %e: tensor<1x2x128x64xbf16>):
    %1:3 = kiln.attention_backward %a, %b, %c, %d, %e : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
    kiln.yield %1#0, %1#1, %1#2 : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
  }
  return %0#0, %0#1, %0#2 : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}
// -----
func.func @not_separate(%q: tensor<1x2x128x256xbf16>) -> (tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>) {
  %0:3 = kiln.fusion "attention" (%q, %q, %q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.attention<wgmma, dq = 64x64x2, dkdv = 64x64x2>} : (tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>) -> (tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>) {
  ^bb0(%a: tensor<1x2x128x256xbf16>, %b: tensor<1x2x128x256xbf16>, %c: tensor<1x2x128x256xbf16>, %d: tensor<1x2x128x256xbf16>, %e: tensor<1x2x128x256xbf16>):
    %1:3 = kiln.attention_backward %a, %b, %c, %d, %e : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
    kiln.yield %1#0, %1#1, %1#2 : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
  }
  return %0#0, %0#1, %0#2 : tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>, tensor<1x2x128x256xbf16>
}
// -----
func.func @gemm_attr(%q: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %0 = kiln.fusion "attention" (%q, %q, %q) {kiln_cuda.kernel = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>} : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  ^bb0(%a: tensor<1x2x128x64xbf16>, %b: tensor<1x2x128x64xbf16>, %c: tensor<1x2x128x64xbf16>):
    %1 = kiln.attention %a, %b, %c : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
    kiln.yield %1 : tensor<1x2x128x64xbf16>
  }
  return %0 : tensor<1x2x128x64xbf16>
}
