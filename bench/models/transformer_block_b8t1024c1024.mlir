// One pre-norm transformer block, B8 T1024 C1024, 16 heads of 64: Linear 1->1024
// -> [RMSNorm -> causal self-attention with RoPE] (+residual) -> [RMSNorm
// -> Linear 1024->4096 -> GELU(tanh) -> Linear 4096->1024] (+residual) -> RMSNorm
// -> Linear 1024->1 -> MSE. Written by bench/models/gen_transformer_block.py;
// bench/run.py times its train_step (kilnc --train=adamw --precision=bf16)
// against the same block in PyTorch (bf16 autocast, f32 weights, AdamW).
func.func @loss(
    %w_in: tensor<1x1024xf32> {kiln.param = #kiln.init<uniform, low = -1.000000e+00, high = 1.000000e+00>, kiln.name = "w_in"},
    %b_in: tensor<1024xf32> {kiln.param = #kiln.init<uniform, low = -1.000000e+00, high = 1.000000e+00>, kiln.name = "b_in"},
    %norm_attn: tensor<1024xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_attn"},
    %w_q: tensor<1024x1024xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_q"},
    %w_k: tensor<1024x1024xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_k"},
    %w_v: tensor<1024x1024xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_v"},
    %w_o: tensor<1024x1024xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_o"},
    %norm_mlp: tensor<1024xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_mlp"},
    %w_up: tensor<1024x4096xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_up"},
    %b_up: tensor<4096xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "b_up"},
    %w_down: tensor<4096x1024xf32> {kiln.param = #kiln.init<uniform, low = -1.562500e-02, high = 1.562500e-02>, kiln.name = "w_down"},
    %b_down: tensor<1024xf32> {kiln.param = #kiln.init<uniform, low = -1.562500e-02, high = 1.562500e-02>, kiln.name = "b_down"},
    %norm_out: tensor<1024xf32> {kiln.param = #kiln.init<ones>, kiln.name = "norm_out"},
    %w_out: tensor<1024x1xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "w_out"},
    %b_out: tensor<1xf32> {kiln.param = #kiln.init<uniform, low = -3.125000e-02, high = 3.125000e-02>, kiln.name = "b_out"},
    %x: tensor<8x1024x1xf32> {kiln.name = "x"},
    %y: tensor<8x1024x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  %e0 = kiln.matmul %x, %w_in : tensor<8x1024x1xf32>, tensor<1x1024xf32>
  %h = kiln.add %e0, %b_in : tensor<8x1024x1024xf32>, tensor<1024xf32>
  %a = kiln.rms_norm %h, %norm_attn eps = 1.0e-05 : tensor<8x1024x1024xf32>, tensor<1024xf32>
  %q0 = kiln.matmul %a, %w_q : tensor<8x1024x1024xf32>, tensor<1024x1024xf32>
  %q1 = kiln.reshape %q0 : tensor<8x1024x1024xf32> -> tensor<8x1024x16x64xf32>
  %k0 = kiln.matmul %a, %w_k : tensor<8x1024x1024xf32>, tensor<1024x1024xf32>
  %k1 = kiln.reshape %k0 : tensor<8x1024x1024xf32> -> tensor<8x1024x16x64xf32>
  %v0 = kiln.matmul %a, %w_v : tensor<8x1024x1024xf32>, tensor<1024x1024xf32>
  %v1 = kiln.reshape %v0 : tensor<8x1024x1024xf32> -> tensor<8x1024x16x64xf32>
  %q2 = kiln.rope %q1 : tensor<8x1024x16x64xf32>
  %k2 = kiln.rope %k1 : tensor<8x1024x16x64xf32>
  %q = kiln.transpose %q2 perm = [0, 2, 1, 3] : tensor<8x1024x16x64xf32>
  %k = kiln.transpose %k2 perm = [0, 2, 1, 3] : tensor<8x1024x16x64xf32>
  %v = kiln.transpose %v1 perm = [0, 2, 1, 3] : tensor<8x1024x16x64xf32>
  %o0 = kiln.attention %q, %k, %v causal : tensor<8x16x1024x64xf32>, tensor<8x16x1024x64xf32>, tensor<8x16x1024x64xf32>
  %o1 = kiln.transpose %o0 perm = [0, 2, 1, 3] : tensor<8x16x1024x64xf32>
  %o2 = kiln.reshape %o1 : tensor<8x1024x16x64xf32> -> tensor<8x1024x1024xf32>
  %o = kiln.matmul %o2, %w_o : tensor<8x1024x1024xf32>, tensor<1024x1024xf32>
  %h1 = kiln.add %h, %o : tensor<8x1024x1024xf32>, tensor<8x1024x1024xf32>
  %m = kiln.rms_norm %h1, %norm_mlp eps = 1.0e-05 : tensor<8x1024x1024xf32>, tensor<1024xf32>
  %u0 = kiln.matmul %m, %w_up : tensor<8x1024x1024xf32>, tensor<1024x4096xf32>
  %u1 = kiln.add %u0, %b_up : tensor<8x1024x4096xf32>, tensor<4096xf32>
  %u = kiln.gelu %u1 approximate = tanh : tensor<8x1024x4096xf32>
  %d0 = kiln.matmul %u, %w_down : tensor<8x1024x4096xf32>, tensor<4096x1024xf32>
  %d = kiln.add %d0, %b_down : tensor<8x1024x1024xf32>, tensor<1024xf32>
  %h2 = kiln.add %h1, %d : tensor<8x1024x1024xf32>, tensor<8x1024x1024xf32>
  %n = kiln.rms_norm %h2, %norm_out eps = 1.0e-05 : tensor<8x1024x1024xf32>, tensor<1024xf32>
  %p0 = kiln.matmul %n, %w_out : tensor<8x1024x1024xf32>, tensor<1024x1xf32>
  %p = kiln.add %p0, %b_out : tensor<8x1024x1xf32>, tensor<1xf32>
  %loss = kiln.mse_loss %p, %y reduction = mean : tensor<8x1024x1xf32>
  return %loss : tensor<f32>
}
