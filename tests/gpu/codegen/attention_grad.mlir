// Attention forward and backward in one function, as a training step meets
// them: the backward reads the forward's row log-sum-exp (kilnc pairs the
// two ops), on the Hopper kernels at head dims 64, 128 and 256, bf16 and
// f16, causal and not, Tq < Tk and tiles that end inside the sequences.
// The reference (kiln-ref on this file) recomputes the softmax in f64.
func.func @f(%q1: tensor<2x2x200x64xbf16> {kiln.name = "q1"}, %k1: tensor<2x2x330x64xbf16> {kiln.name = "k1"},
             %v1: tensor<2x2x330x64xbf16> {kiln.name = "v1"}, %g1: tensor<2x2x200x64xbf16> {kiln.name = "g1"},
             %q2: tensor<1x3x130x128xf16> {kiln.name = "q2"}, %k2: tensor<1x3x130x128xf16> {kiln.name = "k2"},
             %v2: tensor<1x3x130x128xf16> {kiln.name = "v2"}, %g2: tensor<1x3x130x128xf16> {kiln.name = "g2"},
             %q3: tensor<1x2x100x256xbf16> {kiln.name = "q3"}, %k3: tensor<1x2x150x256xbf16> {kiln.name = "k3"},
             %v3: tensor<1x2x150x256xbf16> {kiln.name = "v3"}, %g3: tensor<1x2x100x256xbf16> {kiln.name = "g3"})
    -> (tensor<2x2x200x64xbf16> {kiln.name = "o1"}, tensor<2x2x200x64xbf16> {kiln.name = "dq1"},
        tensor<2x2x330x64xbf16> {kiln.name = "dk1"}, tensor<2x2x330x64xbf16> {kiln.name = "dv1"},
        tensor<1x3x130x128xf16> {kiln.name = "dq2"}, tensor<1x3x130x128xf16> {kiln.name = "dk2"},
        tensor<1x3x130x128xf16> {kiln.name = "dv2"},
        tensor<1x2x100x256xbf16> {kiln.name = "dq3"}, tensor<1x2x150x256xbf16> {kiln.name = "dk3"},
        tensor<1x2x150x256xbf16> {kiln.name = "dv3"}) {
  %o1 = kiln.attention %q1, %k1, %v1 causal : tensor<2x2x200x64xbf16>, tensor<2x2x330x64xbf16>, tensor<2x2x330x64xbf16>
  %d1:3 = kiln.attention_backward %q1, %k1, %v1, %o1, %g1 causal : tensor<2x2x200x64xbf16>, tensor<2x2x330x64xbf16>, tensor<2x2x330x64xbf16>, tensor<2x2x200x64xbf16>
  %o2 = kiln.attention %q2, %k2, %v2 causal scale = 0.1 : tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>
  %d2:3 = kiln.attention_backward %q2, %k2, %v2, %o2, %g2 causal scale = 0.1 : tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>
  %o3 = kiln.attention %q3, %k3, %v3 : tensor<1x2x100x256xbf16>, tensor<1x2x150x256xbf16>, tensor<1x2x150x256xbf16>
  %d3:3 = kiln.attention_backward %q3, %k3, %v3, %o3, %g3 : tensor<1x2x100x256xbf16>, tensor<1x2x150x256xbf16>, tensor<1x2x150x256xbf16>, tensor<1x2x100x256xbf16>
  return %o1, %d1#0, %d1#1, %d1#2, %d2#0, %d2#1, %d2#2, %d3#0, %d3#1, %d3#2
      : tensor<2x2x200x64xbf16>, tensor<2x2x200x64xbf16>, tensor<2x2x330x64xbf16>, tensor<2x2x330x64xbf16>,
        tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>, tensor<1x3x130x128xf16>,
        tensor<1x2x100x256xbf16>, tensor<1x2x150x256xbf16>, tensor<1x2x150x256xbf16>
}
