// Sine denoising with one pre-norm transformer block (B=4, T=32, C=64, 4 heads).
//
// Each input sequence is a sum of two sines plus uniform noise; the model
// predicts the clean signal and is trained with the mean squared error:
//   Linear 1->64 -> [RMSNorm -> 4-head self-attention with RoPE] (+residual)
//   -> [RMSNorm -> Linear 64->256 -> GELU(tanh) -> Linear 256->64] (+residual)
//   -> RMSNorm -> Linear 64->1 -> MSE(prediction, clean signal)
//
// Initialisers: PyTorch's Linear (weights and biases U(+-1/sqrt(fan_in))),
// except that the embedding weight is narrower than its bias (U(+-0.25) vs.
// U(+-1)) so that the first RMSNorm stays close to linear in the input, and
// the read-out weight starts at zero. The residual branches' output
// projections keep their random start: with them at zero the attention and
// MLP weights got no gradient until those projections had grown, and over
// 1000 steps the held-out error came out higher and more spread over seeds.
func.func @loss(
    %w_in: tensor<1x64xf32> {kiln.param = #kiln.init<uniform, low = -0.25, high = 0.25>, kiln.name = "w_in"},
    %b_in: tensor<64xf32> {kiln.param = #kiln.init<uniform, low = -1.0, high = 1.0>, kiln.name = "b_in"},
    %g_attn: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_attn"},
    %w_q: tensor<64x64xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "w_q"},
    %w_k: tensor<64x64xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "w_k"},
    %w_v: tensor<64x64xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "w_v"},
    %w_o: tensor<64x64xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "w_o"},
    %g_mlp: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_mlp"},
    %w_up: tensor<64x256xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "w_up"},
    %b_up: tensor<256xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "b_up"},
    %w_down: tensor<256x64xf32> {kiln.param = #kiln.init<uniform, low = -0.0625, high = 0.0625>, kiln.name = "w_down"},
    %b_down: tensor<64xf32> {kiln.param = #kiln.init<uniform, low = -0.0625, high = 0.0625>, kiln.name = "b_down"},
    %g_out: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_out"},
    %w_out: tensor<64x1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w_out"},
    %b_out: tensor<1xf32> {kiln.param = #kiln.init<uniform, low = -0.125, high = 0.125>, kiln.name = "b_out"},
    %x: tensor<4x32x1xf32> {kiln.name = "x"},
    %y: tensor<4x32x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  // Embed each scalar sample into 64 channels.
  %e0 = kiln.matmul %x, %w_in : tensor<4x32x1xf32>, tensor<1x64xf32>
  %h = kiln.add %e0, %b_in : tensor<4x32x64xf32>, tensor<64xf32>

  // Self-attention over the whole sequence (the clean value at a step depends
  // on the samples after it as much as on those before: no causal mask), 4
  // heads of 16 channels, rotary positions on q and k.
  %a = kiln.rms_norm %h, %g_attn eps = 1.0e-05 : tensor<4x32x64xf32>, tensor<64xf32>
  %q0 = kiln.matmul %a, %w_q : tensor<4x32x64xf32>, tensor<64x64xf32>
  %k0 = kiln.matmul %a, %w_k : tensor<4x32x64xf32>, tensor<64x64xf32>
  %v0 = kiln.matmul %a, %w_v : tensor<4x32x64xf32>, tensor<64x64xf32>
  %q1 = kiln.reshape %q0 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
  %k1 = kiln.reshape %k0 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
  %v1 = kiln.reshape %v0 : tensor<4x32x64xf32> -> tensor<4x32x4x16xf32>
  %q2 = kiln.rope %q1 : tensor<4x32x4x16xf32>
  %k2 = kiln.rope %k1 : tensor<4x32x4x16xf32>
  %q = kiln.transpose %q2 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %k = kiln.transpose %k2 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %v = kiln.transpose %v1 perm = [0, 2, 1, 3] : tensor<4x32x4x16xf32>
  %o0 = kiln.attention %q, %k, %v
      : tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>, tensor<4x4x32x16xf32>
  %o1 = kiln.transpose %o0 perm = [0, 2, 1, 3] : tensor<4x4x32x16xf32>
  %o2 = kiln.reshape %o1 : tensor<4x32x4x16xf32> -> tensor<4x32x64xf32>
  %o = kiln.matmul %o2, %w_o : tensor<4x32x64xf32>, tensor<64x64xf32>
  %h1 = kiln.add %h, %o : tensor<4x32x64xf32>, tensor<4x32x64xf32>

  // GELU MLP, 64 -> 256 -> 64.
  %m = kiln.rms_norm %h1, %g_mlp eps = 1.0e-05 : tensor<4x32x64xf32>, tensor<64xf32>
  %u0 = kiln.matmul %m, %w_up : tensor<4x32x64xf32>, tensor<64x256xf32>
  %u1 = kiln.add %u0, %b_up : tensor<4x32x256xf32>, tensor<256xf32>
  %u = kiln.gelu %u1 approximate = tanh : tensor<4x32x256xf32>
  %d0 = kiln.matmul %u, %w_down : tensor<4x32x256xf32>, tensor<256x64xf32>
  %d = kiln.add %d0, %b_down : tensor<4x32x64xf32>, tensor<64xf32>
  %h2 = kiln.add %h1, %d : tensor<4x32x64xf32>, tensor<4x32x64xf32>

  // Read out one value per step and compare with the clean signal.
  %f = kiln.rms_norm %h2, %g_out eps = 1.0e-05 : tensor<4x32x64xf32>, tensor<64xf32>
  %p0 = kiln.matmul %f, %w_out : tensor<4x32x64xf32>, tensor<64x1xf32>
  %p = kiln.add %p0, %b_out : tensor<4x32x1xf32>, tensor<1xf32>
  %loss = kiln.mse_loss %p, %y reduction = mean : tensor<4x32x1xf32>
  return %loss : tensor<f32>
}
