// Causal attention forward and backward whose work items pair up
// unevenly: five query (and key) tiles of 128 per head, so that each head
// has two pairs of a long and a short item and its middle item alone, and
// 45 heads, so that the 135 units outnumber the SMs and persistent blocks
// take a pair and a middle item (three items: the fixed tiles' barriers go
// through both phases and back). The masked tiles come after (forward, dq)
// or before (dk/dv) each item's unmasked ones, in loops of their own. The
// reference (kiln-ref on this file) recomputes the softmax in f64.
func.func @f(%q: tensor<1x45x640x64xbf16> {kiln.name = "q"}, %k: tensor<1x45x640x64xbf16> {kiln.name = "k"},
             %v: tensor<1x45x640x64xbf16> {kiln.name = "v"}, %g: tensor<1x45x640x64xbf16> {kiln.name = "g"})
    -> (tensor<1x45x640x64xbf16> {kiln.name = "o"}, tensor<1x45x640x64xbf16> {kiln.name = "dq"},
        tensor<1x45x640x64xbf16> {kiln.name = "dk"}, tensor<1x45x640x64xbf16> {kiln.name = "dv"}) {
  %o = kiln.attention %q, %k, %v causal : tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>
  %d:3 = kiln.attention_backward %q, %k, %v, %o, %g causal : tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>
  return %o, %d#0, %d#1, %d#2
      : tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>, tensor<1x45x640x64xbf16>
}
