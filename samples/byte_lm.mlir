// Byte-level transformer language model: next-byte prediction over 256
// classes on windows of text (make_dataset --task text; the samples train on
// the license texts of /usr/share/common-licenses with the last 10% held out,
// see samples/make_gpu_bundle.sh). The mean cross entropy is in nats per
// byte; divided by ln 2 it is bits per byte.
//
// B=32, T=128, d_model 128, 4 pre-LN blocks of 4-head causal attention and a
// GELU(tanh) MLP 128 -> 512 -> 128, residual dropout 0.1; about 0.87M
// parameters:
//   tokens -> embedding [256, 128] + learned positions [128, 128]
//   -> 4 x { h += dropout(W_o attention(LN(h)) + b_o)
//            h += dropout(W_down gelu(W_up LN(h) + b_up) + b_down) }
//   -> LN -> Linear 128 -> 256 at every position -> cross entropy with the
//   next bytes (targets).
//
// Matmul weights are [in, out] (x @ W), drawn N(0, 0.02); the residual
// branches' output projections N(0, 0.02 / sqrt(2 * layers)) as in GPT-2;
// biases zero, norm weights one.
//
// Dropout: each batch's masks are drawn at the Philox counter offset given by
// its first record's dropout_offset (make_dataset writes the record index),
// so they change from batch to batch; the stream tells the dropouts apart.
// For evaluation and for the comparison with PyTorch the rate is set to 0
// (samples/make_gpu_bundle.sh).
func.func @loss(
    %tok_emb: tensor<256x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "tok_emb"},
    %pos_emb: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "pos_emb"},
    %l0_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l0_ln1_w"},
    %l0_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_ln1_b"},
    %l0_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wq"},
    %l0_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wk"},
    %l0_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wv"},
    %l0_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l0_wo"},
    %l0_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_bo"},
    %l0_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l0_ln2_w"},
    %l0_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_ln2_b"},
    %l0_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_w_up"},
    %l0_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_b_up"},
    %l0_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l0_w_down"},
    %l0_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_b_down"},
    %l1_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l1_ln1_w"},
    %l1_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_ln1_b"},
    %l1_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wq"},
    %l1_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wk"},
    %l1_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wv"},
    %l1_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l1_wo"},
    %l1_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_bo"},
    %l1_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l1_ln2_w"},
    %l1_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_ln2_b"},
    %l1_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_w_up"},
    %l1_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_b_up"},
    %l1_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l1_w_down"},
    %l1_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_b_down"},
    %l2_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l2_ln1_w"},
    %l2_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l2_ln1_b"},
    %l2_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l2_wq"},
    %l2_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l2_wk"},
    %l2_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l2_wv"},
    %l2_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l2_wo"},
    %l2_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l2_bo"},
    %l2_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l2_ln2_w"},
    %l2_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l2_ln2_b"},
    %l2_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l2_w_up"},
    %l2_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l2_b_up"},
    %l2_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l2_w_down"},
    %l2_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l2_b_down"},
    %l3_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l3_ln1_w"},
    %l3_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l3_ln1_b"},
    %l3_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l3_wq"},
    %l3_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l3_wk"},
    %l3_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l3_wv"},
    %l3_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l3_wo"},
    %l3_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l3_bo"},
    %l3_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l3_ln2_w"},
    %l3_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l3_ln2_b"},
    %l3_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l3_w_up"},
    %l3_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l3_b_up"},
    %l3_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.007071>, kiln.name = "l3_w_down"},
    %l3_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l3_b_down"},
    %ln_f_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "ln_f_w"},
    %ln_f_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "ln_f_b"},
    %w_head: tensor<128x256xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "w_head"},
    %b_head: tensor<256xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_head"},
    %tokens: tensor<32x128xi32> {kiln.name = "tokens"},
    %targets: tensor<32x128xi32> {kiln.name = "targets"},
    %dropout_offset: tensor<32xi32> {kiln.name = "dropout_offset"}) -> (tensor<f32> {kiln.name = "loss"}) {
  // Dropout masks: a fresh Philox counter per batch, the first record's offset.
  %off0 = kiln.slice %dropout_offset start = [0] limit = [1] step = [1] : tensor<32xi32>
  %off = kiln.reshape %off0 : tensor<1xi32> -> tensor<i32>
  %emb = kiln.embedding %tok_emb, %tokens : tensor<256x128xf32>, tensor<32x128xi32>
  %h0 = kiln.add %emb, %pos_emb : tensor<32x128x128xf32>, tensor<128x128xf32>

  // Block 0: causal self-attention, 4 heads of 32.
  %a0 = kiln.layer_norm %h0, %l0_ln1_w, %l0_ln1_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q0_0 = kiln.matmul %a0, %l0_wq : tensor<32x128x128xf32>, tensor<128x128xf32>
  %q0_1 = kiln.reshape %q0_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %q0 = kiln.transpose %q0_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %k0_0 = kiln.matmul %a0, %l0_wk : tensor<32x128x128xf32>, tensor<128x128xf32>
  %k0_1 = kiln.reshape %k0_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %k0 = kiln.transpose %k0_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %v0_0 = kiln.matmul %a0, %l0_wv : tensor<32x128x128xf32>, tensor<128x128xf32>
  %v0_1 = kiln.reshape %v0_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %v0 = kiln.transpose %v0_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %o0_0 = kiln.attention %q0, %k0, %v0 causal
      : tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>
  %o0_1 = kiln.transpose %o0_0 perm = [0, 2, 1, 3] : tensor<32x4x128x32xf32>
  %o0_2 = kiln.reshape %o0_1 : tensor<32x128x4x32xf32> -> tensor<32x128x128xf32>
  %o0_3 = kiln.matmul %o0_2, %l0_wo : tensor<32x128x128xf32>, tensor<128x128xf32>
  %o0_4 = kiln.add %o0_3, %l0_bo : tensor<32x128x128xf32>, tensor<128xf32>
  %o0 = kiln.dropout %o0_4, %off rate = 0.1 seed = 1 stream = 0 : tensor<32x128x128xf32>
  %r0 = kiln.add %h0, %o0 : tensor<32x128x128xf32>, tensor<32x128x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m0 = kiln.layer_norm %r0, %l0_ln2_w, %l0_ln2_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u0_0 = kiln.matmul %m0, %l0_w_up : tensor<32x128x128xf32>, tensor<128x512xf32>
  %u0_1 = kiln.add %u0_0, %l0_b_up : tensor<32x128x512xf32>, tensor<512xf32>
  %u0 = kiln.gelu %u0_1 approximate = tanh : tensor<32x128x512xf32>
  %d0_0 = kiln.matmul %u0, %l0_w_down : tensor<32x128x512xf32>, tensor<512x128xf32>
  %d0_1 = kiln.add %d0_0, %l0_b_down : tensor<32x128x128xf32>, tensor<128xf32>
  %d0 = kiln.dropout %d0_1, %off rate = 0.1 seed = 1 stream = 1 : tensor<32x128x128xf32>
  %h1 = kiln.add %r0, %d0 : tensor<32x128x128xf32>, tensor<32x128x128xf32>

  // Block 1: causal self-attention, 4 heads of 32.
  %a1 = kiln.layer_norm %h1, %l1_ln1_w, %l1_ln1_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q1_0 = kiln.matmul %a1, %l1_wq : tensor<32x128x128xf32>, tensor<128x128xf32>
  %q1_1 = kiln.reshape %q1_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %q1 = kiln.transpose %q1_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %k1_0 = kiln.matmul %a1, %l1_wk : tensor<32x128x128xf32>, tensor<128x128xf32>
  %k1_1 = kiln.reshape %k1_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %k1 = kiln.transpose %k1_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %v1_0 = kiln.matmul %a1, %l1_wv : tensor<32x128x128xf32>, tensor<128x128xf32>
  %v1_1 = kiln.reshape %v1_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %v1 = kiln.transpose %v1_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %o1_0 = kiln.attention %q1, %k1, %v1 causal
      : tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>
  %o1_1 = kiln.transpose %o1_0 perm = [0, 2, 1, 3] : tensor<32x4x128x32xf32>
  %o1_2 = kiln.reshape %o1_1 : tensor<32x128x4x32xf32> -> tensor<32x128x128xf32>
  %o1_3 = kiln.matmul %o1_2, %l1_wo : tensor<32x128x128xf32>, tensor<128x128xf32>
  %o1_4 = kiln.add %o1_3, %l1_bo : tensor<32x128x128xf32>, tensor<128xf32>
  %o1 = kiln.dropout %o1_4, %off rate = 0.1 seed = 1 stream = 2 : tensor<32x128x128xf32>
  %r1 = kiln.add %h1, %o1 : tensor<32x128x128xf32>, tensor<32x128x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m1 = kiln.layer_norm %r1, %l1_ln2_w, %l1_ln2_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u1_0 = kiln.matmul %m1, %l1_w_up : tensor<32x128x128xf32>, tensor<128x512xf32>
  %u1_1 = kiln.add %u1_0, %l1_b_up : tensor<32x128x512xf32>, tensor<512xf32>
  %u1 = kiln.gelu %u1_1 approximate = tanh : tensor<32x128x512xf32>
  %d1_0 = kiln.matmul %u1, %l1_w_down : tensor<32x128x512xf32>, tensor<512x128xf32>
  %d1_1 = kiln.add %d1_0, %l1_b_down : tensor<32x128x128xf32>, tensor<128xf32>
  %d1 = kiln.dropout %d1_1, %off rate = 0.1 seed = 1 stream = 3 : tensor<32x128x128xf32>
  %h2 = kiln.add %r1, %d1 : tensor<32x128x128xf32>, tensor<32x128x128xf32>

  // Block 2: causal self-attention, 4 heads of 32.
  %a2 = kiln.layer_norm %h2, %l2_ln1_w, %l2_ln1_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q2_0 = kiln.matmul %a2, %l2_wq : tensor<32x128x128xf32>, tensor<128x128xf32>
  %q2_1 = kiln.reshape %q2_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %q2 = kiln.transpose %q2_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %k2_0 = kiln.matmul %a2, %l2_wk : tensor<32x128x128xf32>, tensor<128x128xf32>
  %k2_1 = kiln.reshape %k2_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %k2 = kiln.transpose %k2_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %v2_0 = kiln.matmul %a2, %l2_wv : tensor<32x128x128xf32>, tensor<128x128xf32>
  %v2_1 = kiln.reshape %v2_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %v2 = kiln.transpose %v2_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %o2_0 = kiln.attention %q2, %k2, %v2 causal
      : tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>
  %o2_1 = kiln.transpose %o2_0 perm = [0, 2, 1, 3] : tensor<32x4x128x32xf32>
  %o2_2 = kiln.reshape %o2_1 : tensor<32x128x4x32xf32> -> tensor<32x128x128xf32>
  %o2_3 = kiln.matmul %o2_2, %l2_wo : tensor<32x128x128xf32>, tensor<128x128xf32>
  %o2_4 = kiln.add %o2_3, %l2_bo : tensor<32x128x128xf32>, tensor<128xf32>
  %o2 = kiln.dropout %o2_4, %off rate = 0.1 seed = 1 stream = 4 : tensor<32x128x128xf32>
  %r2 = kiln.add %h2, %o2 : tensor<32x128x128xf32>, tensor<32x128x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m2 = kiln.layer_norm %r2, %l2_ln2_w, %l2_ln2_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u2_0 = kiln.matmul %m2, %l2_w_up : tensor<32x128x128xf32>, tensor<128x512xf32>
  %u2_1 = kiln.add %u2_0, %l2_b_up : tensor<32x128x512xf32>, tensor<512xf32>
  %u2 = kiln.gelu %u2_1 approximate = tanh : tensor<32x128x512xf32>
  %d2_0 = kiln.matmul %u2, %l2_w_down : tensor<32x128x512xf32>, tensor<512x128xf32>
  %d2_1 = kiln.add %d2_0, %l2_b_down : tensor<32x128x128xf32>, tensor<128xf32>
  %d2 = kiln.dropout %d2_1, %off rate = 0.1 seed = 1 stream = 5 : tensor<32x128x128xf32>
  %h3 = kiln.add %r2, %d2 : tensor<32x128x128xf32>, tensor<32x128x128xf32>

  // Block 3: causal self-attention, 4 heads of 32.
  %a3 = kiln.layer_norm %h3, %l3_ln1_w, %l3_ln1_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q3_0 = kiln.matmul %a3, %l3_wq : tensor<32x128x128xf32>, tensor<128x128xf32>
  %q3_1 = kiln.reshape %q3_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %q3 = kiln.transpose %q3_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %k3_0 = kiln.matmul %a3, %l3_wk : tensor<32x128x128xf32>, tensor<128x128xf32>
  %k3_1 = kiln.reshape %k3_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %k3 = kiln.transpose %k3_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %v3_0 = kiln.matmul %a3, %l3_wv : tensor<32x128x128xf32>, tensor<128x128xf32>
  %v3_1 = kiln.reshape %v3_0 : tensor<32x128x128xf32> -> tensor<32x128x4x32xf32>
  %v3 = kiln.transpose %v3_1 perm = [0, 2, 1, 3] : tensor<32x128x4x32xf32>
  %o3_0 = kiln.attention %q3, %k3, %v3 causal
      : tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>, tensor<32x4x128x32xf32>
  %o3_1 = kiln.transpose %o3_0 perm = [0, 2, 1, 3] : tensor<32x4x128x32xf32>
  %o3_2 = kiln.reshape %o3_1 : tensor<32x128x4x32xf32> -> tensor<32x128x128xf32>
  %o3_3 = kiln.matmul %o3_2, %l3_wo : tensor<32x128x128xf32>, tensor<128x128xf32>
  %o3_4 = kiln.add %o3_3, %l3_bo : tensor<32x128x128xf32>, tensor<128xf32>
  %o3 = kiln.dropout %o3_4, %off rate = 0.1 seed = 1 stream = 6 : tensor<32x128x128xf32>
  %r3 = kiln.add %h3, %o3 : tensor<32x128x128xf32>, tensor<32x128x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m3 = kiln.layer_norm %r3, %l3_ln2_w, %l3_ln2_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u3_0 = kiln.matmul %m3, %l3_w_up : tensor<32x128x128xf32>, tensor<128x512xf32>
  %u3_1 = kiln.add %u3_0, %l3_b_up : tensor<32x128x512xf32>, tensor<512xf32>
  %u3 = kiln.gelu %u3_1 approximate = tanh : tensor<32x128x512xf32>
  %d3_0 = kiln.matmul %u3, %l3_w_down : tensor<32x128x512xf32>, tensor<512x128xf32>
  %d3_1 = kiln.add %d3_0, %l3_b_down : tensor<32x128x128xf32>, tensor<128xf32>
  %d3 = kiln.dropout %d3_1, %off rate = 0.1 seed = 1 stream = 7 : tensor<32x128x128xf32>
  %h4 = kiln.add %r3, %d3 : tensor<32x128x128xf32>, tensor<32x128x128xf32>

  // Next-byte logits at every position.
  %fin = kiln.layer_norm %h4, %ln_f_w, %ln_f_b eps = 1.0e-05 : tensor<32x128x128xf32>, tensor<128xf32>, tensor<128xf32>
  %z0 = kiln.matmul %fin, %w_head : tensor<32x128x128xf32>, tensor<128x256xf32>
  %z1 = kiln.add %z0, %b_head : tensor<32x128x256xf32>, tensor<256xf32>
  %logits = kiln.reshape %z1 : tensor<32x128x256xf32> -> tensor<4096x256xf32>
  %labels = kiln.reshape %targets : tensor<32x128xi32> -> tensor<4096xi32>
  %loss = kiln.cross_entropy %logits, %labels : tensor<4096x256xf32>, tensor<4096xi32>
  return %loss : tensor<f32>
}
