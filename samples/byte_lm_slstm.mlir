// Byte-level language model with one multi-head sLSTM layer (exponential
// gating with a stabiliser state): next-byte prediction over 256 classes on
// the windows of text of samples/byte_lm.mlir
// (make_dataset --task text over the license texts of
// /usr/share/common-licenses, the last 10% held out; see
// samples/make_gpu_bundle.sh). The mean cross entropy is in nats per byte;
// divided by ln 2 it is bits per byte.
//
// B=32, T=128, 4 heads of D=64 (hidden size 256); about 0.30M parameters:
//   tokens -> embedding [256, 128]
//   -> x @ w_x [128, 1024], reshaped to the input projection Wx
//      [B, T, 4, 4, 64] (column g * 256 + n * 64 + d is gate g, head n, unit d)
//   -> kiln.rnn function = slstm with the recurrent matrices r [4, 4, 64, 64]
//      (block-diagonal over the heads) and biases b [4, 4, 64], from zero
//      initial states (4 states: h, c, n, m; gates i f z o, exponential input and forget gates)
//   -> h of every step [B, T, 256] @ w_head [256, 256] + b_head
//   -> cross entropy with the next bytes (targets).
//
// Weights are [in, out] (x @ W), drawn N(0, 1/sqrt(fan-in)); the embedding
// N(0, 1); biases zero. No dropout: the model has no random stream, so the
// evaluation and the comparison with PyTorch (samples/torch/compare_rnn_lm.py)
// use it as written.
func.func @loss(
    %tok_emb: tensor<256x128xf32> {kiln.param = #kiln.init<normal, std = 1.0>, kiln.name = "tok_emb"},
    %w_x: tensor<128x1024xf32> {kiln.param = #kiln.init<normal, std = 0.088388>, kiln.name = "w_x"},
    %r: tensor<4x4x64x64xf32> {kiln.param = #kiln.init<normal, std = 0.125>, kiln.name = "r"},
    %b: tensor<4x4x64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %w_head: tensor<256x256xf32> {kiln.param = #kiln.init<normal, std = 0.0625>, kiln.name = "w_head"},
    %b_head: tensor<256xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_head"},
    %tokens: tensor<32x128xi32> {kiln.name = "tokens"},
    %targets: tensor<32x128xi32> {kiln.name = "targets"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %emb = kiln.embedding %tok_emb, %tokens : tensor<256x128xf32>, tensor<32x128xi32>
  // The input projection of every gate and head at once.
  %x0 = kiln.matmul %emb, %w_x : tensor<32x128x128xf32>, tensor<128x1024xf32>
  %wx = kiln.reshape %x0 : tensor<32x128x1024xf32> -> tensor<32x128x4x4x64xf32>
  %s0 = kiln.constant dense<0.0> : tensor<4x32x4x64xf32>
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = slstm
      : tensor<32x128x4x4x64xf32>, tensor<4x4x64x64xf32>, tensor<4x4x64xf32>, tensor<4x32x4x64xf32>
  // State 0 is h.
  %h0 = kiln.slice %all start = [0, 0, 0, 0, 0] limit = [1, 32, 128, 4, 64] step = [1, 1, 1, 1, 1] : tensor<4x32x128x4x64xf32>
  %h = kiln.reshape %h0 : tensor<1x32x128x4x64xf32> -> tensor<32x128x256xf32>
  // Next-byte logits at every position.
  %z0 = kiln.matmul %h, %w_head : tensor<32x128x256xf32>, tensor<256x256xf32>
  %z1 = kiln.add %z0, %b_head : tensor<32x128x256xf32>, tensor<256xf32>
  %logits = kiln.reshape %z1 : tensor<32x128x256xf32> -> tensor<4096x256xf32>
  %labels = kiln.reshape %targets : tensor<32x128xi32> -> tensor<4096xi32>
  %loss = kiln.cross_entropy %logits, %labels : tensor<4096x256xf32>, tensor<4096xi32>
  return %loss : tensor<f32>
}
