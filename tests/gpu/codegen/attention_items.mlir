// Attention forward and backward with more work items than the GPU has
// SMs, so that persistent blocks of the Hopper kernels take several
// (batch * head, tile) items in turn: the producer copies the next item's
// own tiles while the consumers finish the last one, and the stages' phases
// run on across items. Causal bf16 at head dim 64: 136 items per kernel,
// of one to four streamed tiles each. (bench/run.py checks the same at
// B8 H16 T2048, head dims 64 and 128, causal and not, against torch in f64.)
// The reference (kiln-ref on this file) recomputes the softmax in f64.
func.func @f(%q: tensor<1x68x256x64xbf16> {kiln.name = "q"}, %k: tensor<1x68x256x64xbf16> {kiln.name = "k"},
             %v: tensor<1x68x256x64xbf16> {kiln.name = "v"}, %g: tensor<1x68x256x64xbf16> {kiln.name = "g"})
    -> (tensor<1x68x256x64xbf16> {kiln.name = "o"}, tensor<1x68x256x64xbf16> {kiln.name = "dq"},
        tensor<1x68x256x64xbf16> {kiln.name = "dk"}, tensor<1x68x256x64xbf16> {kiln.name = "dv"}) {
  %o = kiln.attention %q, %k, %v causal : tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>
  %d:3 = kiln.attention_backward %q, %k, %v, %o, %g causal : tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>
  return %o, %d#0, %d#1, %d#2
      : tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>, tensor<1x68x256x64xbf16>
}
