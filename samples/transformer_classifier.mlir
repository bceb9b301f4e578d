// Transformer classifier over byte sequences: which order do the markers
// 'A', 'B' and 'C' appear in (6 classes)? The data is make_dataset --task
// order: 64 random lowercase letters with each marker once; every class has
// the same distribution of byte counts, so the label is only in the
// positions and a model of the bag of bytes stays at chance (1/6).
//
// B=64, T=64, d_model 128, 2 pre-LN blocks of 4-head causal attention and a
// GELU(tanh) MLP 128 -> 512 -> 128, residual dropout 0.1; about 0.44M
// parameters:
//   tokens -> embedding [256, 128] + learned positions [64, 128]
//   -> 2 x { h += dropout(W_o attention(LN(h)) + b_o)
//            h += dropout(W_down gelu(W_up LN(h) + b_up) + b_down) }
//   -> the last position (causal: the only one that sees the whole sequence)
//   -> LN -> Linear 128 -> 6 -> cross entropy, label smoothing 0.1.
// A second result is the fraction of the batch classified correctly.
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
    %pos_emb: tensor<64x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "pos_emb"},
    %l0_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l0_ln1_w"},
    %l0_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_ln1_b"},
    %l0_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wq"},
    %l0_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wk"},
    %l0_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_wv"},
    %l0_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.010000>, kiln.name = "l0_wo"},
    %l0_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_bo"},
    %l0_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l0_ln2_w"},
    %l0_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_ln2_b"},
    %l0_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l0_w_up"},
    %l0_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_b_up"},
    %l0_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.010000>, kiln.name = "l0_w_down"},
    %l0_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l0_b_down"},
    %l1_ln1_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l1_ln1_w"},
    %l1_ln1_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_ln1_b"},
    %l1_wq: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wq"},
    %l1_wk: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wk"},
    %l1_wv: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_wv"},
    %l1_wo: tensor<128x128xf32> {kiln.param = #kiln.init<normal, std = 0.010000>, kiln.name = "l1_wo"},
    %l1_bo: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_bo"},
    %l1_ln2_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "l1_ln2_w"},
    %l1_ln2_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_ln2_b"},
    %l1_w_up: tensor<128x512xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "l1_w_up"},
    %l1_b_up: tensor<512xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_b_up"},
    %l1_w_down: tensor<512x128xf32> {kiln.param = #kiln.init<normal, std = 0.010000>, kiln.name = "l1_w_down"},
    %l1_b_down: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "l1_b_down"},
    %ln_f_w: tensor<128xf32> {kiln.param = #kiln.init<ones>, kiln.name = "ln_f_w"},
    %ln_f_b: tensor<128xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "ln_f_b"},
    %w_head: tensor<128x6xf32> {kiln.param = #kiln.init<normal, std = 0.02>, kiln.name = "w_head"},
    %b_head: tensor<6xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b_head"},
    %tokens: tensor<64x64xi32> {kiln.name = "tokens"},
    %labels: tensor<64xi32> {kiln.name = "labels"},
    %dropout_offset: tensor<64xi32> {kiln.name = "dropout_offset"}) -> (tensor<f32> {kiln.name = "loss"}, tensor<f32> {kiln.name = "accuracy"}) {
  // Dropout masks: a fresh Philox counter per batch, the first record's offset.
  %off0 = kiln.slice %dropout_offset start = [0] limit = [1] step = [1] : tensor<64xi32>
  %off = kiln.reshape %off0 : tensor<1xi32> -> tensor<i32>
  %emb = kiln.embedding %tok_emb, %tokens : tensor<256x128xf32>, tensor<64x64xi32>
  %h0 = kiln.add %emb, %pos_emb : tensor<64x64x128xf32>, tensor<64x128xf32>

  // Block 0: causal self-attention, 4 heads of 32.
  %a0 = kiln.layer_norm %h0, %l0_ln1_w, %l0_ln1_b eps = 1.0e-05 : tensor<64x64x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q0_0 = kiln.matmul %a0, %l0_wq : tensor<64x64x128xf32>, tensor<128x128xf32>
  %q0_1 = kiln.reshape %q0_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %q0 = kiln.transpose %q0_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %k0_0 = kiln.matmul %a0, %l0_wk : tensor<64x64x128xf32>, tensor<128x128xf32>
  %k0_1 = kiln.reshape %k0_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %k0 = kiln.transpose %k0_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %v0_0 = kiln.matmul %a0, %l0_wv : tensor<64x64x128xf32>, tensor<128x128xf32>
  %v0_1 = kiln.reshape %v0_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %v0 = kiln.transpose %v0_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %o0_0 = kiln.attention %q0, %k0, %v0 causal
      : tensor<64x4x64x32xf32>, tensor<64x4x64x32xf32>, tensor<64x4x64x32xf32>
  %o0_1 = kiln.transpose %o0_0 perm = [0, 2, 1, 3] : tensor<64x4x64x32xf32>
  %o0_2 = kiln.reshape %o0_1 : tensor<64x64x4x32xf32> -> tensor<64x64x128xf32>
  %o0_3 = kiln.matmul %o0_2, %l0_wo : tensor<64x64x128xf32>, tensor<128x128xf32>
  %o0_4 = kiln.add %o0_3, %l0_bo : tensor<64x64x128xf32>, tensor<128xf32>
  %o0 = kiln.dropout %o0_4, %off rate = 0.1 seed = 1 stream = 0 : tensor<64x64x128xf32>
  %r0 = kiln.add %h0, %o0 : tensor<64x64x128xf32>, tensor<64x64x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m0 = kiln.layer_norm %r0, %l0_ln2_w, %l0_ln2_b eps = 1.0e-05 : tensor<64x64x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u0_0 = kiln.matmul %m0, %l0_w_up : tensor<64x64x128xf32>, tensor<128x512xf32>
  %u0_1 = kiln.add %u0_0, %l0_b_up : tensor<64x64x512xf32>, tensor<512xf32>
  %u0 = kiln.gelu %u0_1 approximate = tanh : tensor<64x64x512xf32>
  %d0_0 = kiln.matmul %u0, %l0_w_down : tensor<64x64x512xf32>, tensor<512x128xf32>
  %d0_1 = kiln.add %d0_0, %l0_b_down : tensor<64x64x128xf32>, tensor<128xf32>
  %d0 = kiln.dropout %d0_1, %off rate = 0.1 seed = 1 stream = 1 : tensor<64x64x128xf32>
  %h1 = kiln.add %r0, %d0 : tensor<64x64x128xf32>, tensor<64x64x128xf32>

  // Block 1: causal self-attention, 4 heads of 32.
  %a1 = kiln.layer_norm %h1, %l1_ln1_w, %l1_ln1_b eps = 1.0e-05 : tensor<64x64x128xf32>, tensor<128xf32>, tensor<128xf32>
  %q1_0 = kiln.matmul %a1, %l1_wq : tensor<64x64x128xf32>, tensor<128x128xf32>
  %q1_1 = kiln.reshape %q1_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %q1 = kiln.transpose %q1_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %k1_0 = kiln.matmul %a1, %l1_wk : tensor<64x64x128xf32>, tensor<128x128xf32>
  %k1_1 = kiln.reshape %k1_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %k1 = kiln.transpose %k1_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %v1_0 = kiln.matmul %a1, %l1_wv : tensor<64x64x128xf32>, tensor<128x128xf32>
  %v1_1 = kiln.reshape %v1_0 : tensor<64x64x128xf32> -> tensor<64x64x4x32xf32>
  %v1 = kiln.transpose %v1_1 perm = [0, 2, 1, 3] : tensor<64x64x4x32xf32>
  %o1_0 = kiln.attention %q1, %k1, %v1 causal
      : tensor<64x4x64x32xf32>, tensor<64x4x64x32xf32>, tensor<64x4x64x32xf32>
  %o1_1 = kiln.transpose %o1_0 perm = [0, 2, 1, 3] : tensor<64x4x64x32xf32>
  %o1_2 = kiln.reshape %o1_1 : tensor<64x64x4x32xf32> -> tensor<64x64x128xf32>
  %o1_3 = kiln.matmul %o1_2, %l1_wo : tensor<64x64x128xf32>, tensor<128x128xf32>
  %o1_4 = kiln.add %o1_3, %l1_bo : tensor<64x64x128xf32>, tensor<128xf32>
  %o1 = kiln.dropout %o1_4, %off rate = 0.1 seed = 1 stream = 2 : tensor<64x64x128xf32>
  %r1 = kiln.add %h1, %o1 : tensor<64x64x128xf32>, tensor<64x64x128xf32>
  // MLP 128 -> 512 -> 128, GELU (tanh).
  %m1 = kiln.layer_norm %r1, %l1_ln2_w, %l1_ln2_b eps = 1.0e-05 : tensor<64x64x128xf32>, tensor<128xf32>, tensor<128xf32>
  %u1_0 = kiln.matmul %m1, %l1_w_up : tensor<64x64x128xf32>, tensor<128x512xf32>
  %u1_1 = kiln.add %u1_0, %l1_b_up : tensor<64x64x512xf32>, tensor<512xf32>
  %u1 = kiln.gelu %u1_1 approximate = tanh : tensor<64x64x512xf32>
  %d1_0 = kiln.matmul %u1, %l1_w_down : tensor<64x64x512xf32>, tensor<512x128xf32>
  %d1_1 = kiln.add %d1_0, %l1_b_down : tensor<64x64x128xf32>, tensor<128xf32>
  %d1 = kiln.dropout %d1_1, %off rate = 0.1 seed = 1 stream = 3 : tensor<64x64x128xf32>
  %h2 = kiln.add %r1, %d1 : tensor<64x64x128xf32>, tensor<64x64x128xf32>

  // Head on the last position, which attends to the whole sequence.
  %last0 = kiln.slice %h2 start = [0, 63, 0] limit = [64, 64, 128] step = [1, 1, 1] : tensor<64x64x128xf32>
  %last = kiln.reshape %last0 : tensor<64x1x128xf32> -> tensor<64x128xf32>
  %fin = kiln.layer_norm %last, %ln_f_w, %ln_f_b eps = 1.0e-05 : tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>
  %z0 = kiln.matmul %fin, %w_head : tensor<64x128xf32>, tensor<128x6xf32>
  %logits = kiln.add %z0, %b_head : tensor<64x6xf32>, tensor<6xf32>
  %loss = kiln.cross_entropy %logits, %labels label_smoothing = 0.1 : tensor<64x6xf32>, tensor<64xi32>
  // Fraction of the batch classified correctly (not differentiated).
  %pred = kiln.argmax %logits dim = 1 : tensor<64x6xf32>
  %hit = kiln.compare eq, %pred, %labels : tensor<64xi32>, tensor<64xi32>
  %hitf = kiln.cast %hit : tensor<64xi1> to tensor<64xf32>
  %accuracy = kiln.reduce_mean %hitf dims = [0] : tensor<64xf32>
  return %loss, %accuracy : tensor<f32>, tensor<f32>
}
