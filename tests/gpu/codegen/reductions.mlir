// Reductions, softmax, norms and losses; the same written from primitives
// (fused into one kernel each with their prologue and epilogue), and
// whole-tensor reductions of several tensors (one multi-tensor kernel).
func.func @f(%x: tensor<6x37xf32> {kiln.name = "x"}, %w: tensor<37xf32> {kiln.name = "w"},
             %b: tensor<37xf32> {kiln.name = "b"}, %t: tensor<6x37xf32> {kiln.name = "t"},
             %labels: tensor<6xi32> {kiln.name = "labels"},
             %big: tensor<300x100xf32> {kiln.name = "big"}, %v: tensor<3001xf32> {kiln.name = "v"},
             %k: tensor<7x3xf32> {kiln.name = "k"}, %rows: tensor<2x20000xf32> {kiln.name = "rows"},
             %h: tensor<4x32x64xf32> {kiln.name = "h"}, %g: tensor<64xf32> {kiln.name = "g"})
    -> (tensor<37xf32> {kiln.name = "sum0"}, tensor<6xf32> {kiln.name = "max1"},
        tensor<6xi32> {kiln.name = "argmax"}, tensor<6x37xf32> {kiln.name = "softmax"},
        tensor<6x37xf32> {kiln.name = "log_softmax0"}, tensor<6x37xf32> {kiln.name = "rms"},
        tensor<6x37xf32> {kiln.name = "ln"}, tensor<f32> {kiln.name = "mse"},
        tensor<f32> {kiln.name = "ce"}, tensor<f32> {kiln.name = "mean_all"},
        tensor<6x37xf32> {kiln.name = "softmax_prim"},
        tensor<2x20000xf32> {kiln.name = "log_softmax_prim"},
        tensor<4x32x64xf32> {kiln.name = "rms_prim"}, tensor<6x37xf32> {kiln.name = "ln_prim"},
        tensor<f32> {kiln.name = "mse_prim"}, tensor<6xf32> {kiln.name = "mean_rows"},
        tensor<37xf32> {kiln.name = "col_max_exp"}, tensor<6x37xf32> {kiln.name = "xw"},
        tensor<2xf32> {kiln.name = "mean_sq_long_rows"}, tensor<f32> {kiln.name = "centered"},
        tensor<f32> {kiln.name = "global_norm"}, tensor<f32> {kiln.name = "max_abs"},
        tensor<f32> {kiln.name = "positive_count"}) {
  %0 = kiln.reduce_sum %x dims = [0] : tensor<6x37xf32>
  %1 = kiln.reduce_max %x dims = [1] : tensor<6x37xf32>
  %2 = kiln.argmax %x dim = 1 : tensor<6x37xf32>
  %3 = kiln.softmax %x dim = 1 : tensor<6x37xf32>
  %4 = kiln.log_softmax %x dim = 0 : tensor<6x37xf32>
  %5 = kiln.rms_norm %x, %w eps = 1.0e-05 : tensor<6x37xf32>, tensor<37xf32>
  %6 = kiln.layer_norm %x, %w, %b : tensor<6x37xf32>, tensor<37xf32>, tensor<37xf32>
  %7 = kiln.mse_loss %x, %t reduction = mean : tensor<6x37xf32>
  %8 = kiln.cross_entropy %x, %labels label_smoothing = 0.1 : tensor<6x37xf32>, tensor<6xi32>
  %9 = kiln.reduce_mean %t dims = [0, 1] : tensor<6x37xf32>

  // softmax over rows of 37 (kept in registers).
  %sm_m = kiln.reduce_max %x dims = [1] keepdim : tensor<6x37xf32>
  %sm_d = kiln.sub %x, %sm_m : tensor<6x37xf32>, tensor<6x1xf32>
  %sm_e = kiln.exp %sm_d : tensor<6x37xf32>
  %sm_s = kiln.reduce_sum %sm_e dims = [1] keepdim : tensor<6x37xf32>
  %sm = kiln.div %sm_e, %sm_s : tensor<6x37xf32>, tensor<6x1xf32>
  // log_softmax over rows of 20000 (re-read from memory).
  %ls_m = kiln.reduce_max %rows dims = [1] keepdim : tensor<2x20000xf32>
  %ls_d = kiln.sub %rows, %ls_m : tensor<2x20000xf32>, tensor<2x1xf32>
  %ls_e = kiln.exp %ls_d : tensor<2x20000xf32>
  %ls_s = kiln.reduce_sum %ls_e dims = [1] keepdim : tensor<2x20000xf32>
  %ls_l = kiln.log %ls_s : tensor<2x1xf32>
  %ls = kiln.sub %ls_d, %ls_l : tensor<2x20000xf32>, tensor<2x1xf32>
  // rms_norm of the sine block's activations.
  %r_sq = kiln.mul %h, %h : tensor<4x32x64xf32>, tensor<4x32x64xf32>
  %r_ms = kiln.reduce_mean %r_sq dims = [2] keepdim : tensor<4x32x64xf32>
  %r_eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %r_t = kiln.add %r_ms, %r_eps : tensor<4x32x1xf32>, tensor<f32>
  %r_r = kiln.rsqrt %r_t : tensor<4x32x1xf32>
  %r_n = kiln.mul %h, %r_r : tensor<4x32x64xf32>, tensor<4x32x1xf32>
  %rms = kiln.mul %r_n, %g : tensor<4x32x64xf32>, tensor<64xf32>
  // layer_norm: mean, then the variance of the centered rows.
  %l_mean = kiln.reduce_mean %x dims = [1] keepdim : tensor<6x37xf32>
  %l_c = kiln.sub %x, %l_mean : tensor<6x37xf32>, tensor<6x1xf32>
  %l_c2 = kiln.mul %l_c, %l_c : tensor<6x37xf32>, tensor<6x37xf32>
  %l_var = kiln.reduce_mean %l_c2 dims = [1] keepdim : tensor<6x37xf32>
  %l_t = kiln.add %l_var, %r_eps : tensor<6x1xf32>, tensor<f32>
  %l_r = kiln.rsqrt %l_t : tensor<6x1xf32>
  %l_n = kiln.mul %l_c, %l_r : tensor<6x37xf32>, tensor<6x1xf32>
  %l_w = kiln.mul %l_n, %w : tensor<6x37xf32>, tensor<37xf32>
  %ln = kiln.add %l_w, %b : tensor<6x37xf32>, tensor<37xf32>
  // mse from primitives.
  %m_d = kiln.sub %x, %t : tensor<6x37xf32>, tensor<6x37xf32>
  %m_s = kiln.mul %m_d, %m_d : tensor<6x37xf32>, tensor<6x37xf32>
  %mse = kiln.reduce_mean %m_s dims = [0, 1] : tensor<6x37xf32>
  // A mean as sum / n.
  %mr_s = kiln.reduce_sum %t dims = [1] : tensor<6x37xf32>
  %mr_n = kiln.constant dense<37.0> : tensor<f32>
  %mean_rows = kiln.div %mr_s, %mr_n : tensor<6xf32>, tensor<f32>
  // A column reduction with a broadcast prologue that is also a result.
  %xw = kiln.mul %t, %w : tensor<6x37xf32>, tensor<37xf32>
  %c_m = kiln.reduce_max %xw dims = [0] : tensor<6x37xf32>
  %col = kiln.exp %c_m : tensor<37xf32>
  // Two long rows: split over blocks, combined in a second pass.
  %lr_sq = kiln.mul %rows, %rows : tensor<2x20000xf32>, tensor<2x20000xf32>
  %lr = kiln.reduce_mean %lr_sq dims = [1] : tensor<2x20000xf32>
  // A centered loss: mean((d - mean(d))^2).
  %ce_m = kiln.reduce_mean %m_d dims = [0, 1] : tensor<6x37xf32>
  %ce_c = kiln.sub %m_d, %ce_m : tensor<6x37xf32>, tensor<f32>
  %ce_c2 = kiln.mul %ce_c, %ce_c : tensor<6x37xf32>, tensor<6x37xf32>
  %centered = kiln.reduce_mean %ce_c2 dims = [0, 1] : tensor<6x37xf32>
  // Norm, max |.| and a count over three tensors (30000 + 3001 + 21 elements).
  %big2 = kiln.mul %big, %big : tensor<300x100xf32>, tensor<300x100xf32>
  %n_big = kiln.reduce_sum %big2 dims = [0, 1] : tensor<300x100xf32>
  %v2 = kiln.mul %v, %v : tensor<3001xf32>, tensor<3001xf32>
  %n_v = kiln.reduce_sum %v2 dims = [0] : tensor<3001xf32>
  %k2 = kiln.mul %k, %k : tensor<7x3xf32>, tensor<7x3xf32>
  %n_k = kiln.reduce_sum %k2 dims = [0, 1] : tensor<7x3xf32>
  %n_1 = kiln.add %n_big, %n_v : tensor<f32>, tensor<f32>
  %n_2 = kiln.add %n_1, %n_k : tensor<f32>, tensor<f32>
  %norm = kiln.sqrt %n_2 : tensor<f32>
  %a_big = kiln.abs %big : tensor<300x100xf32>
  %m_big = kiln.reduce_max %a_big dims = [0, 1] : tensor<300x100xf32>
  %a_v = kiln.abs %v : tensor<3001xf32>
  %m_v = kiln.reduce_max %a_v dims = [0] : tensor<3001xf32>
  %a_k = kiln.abs %k : tensor<7x3xf32>
  %m_k = kiln.reduce_max %a_k dims = [0, 1] : tensor<7x3xf32>
  %m_1 = kiln.max %m_big, %m_v : tensor<f32>, tensor<f32>
  %max_abs = kiln.max %m_1, %m_k : tensor<f32>, tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %p_c = kiln.compare gt, %big, %zero : tensor<300x100xf32>, tensor<f32>
  %p_s = kiln.select %p_c, %one, %zero : tensor<300x100xi1>, tensor<f32>, tensor<f32>
  %p_n = kiln.reduce_sum %p_s dims = [0, 1] : tensor<300x100xf32>
  %pv_c = kiln.compare gt, %v, %zero : tensor<3001xf32>, tensor<f32>
  %pv_s = kiln.select %pv_c, %one, %zero : tensor<3001xi1>, tensor<f32>, tensor<f32>
  %pv_n = kiln.reduce_sum %pv_s dims = [0] : tensor<3001xf32>
  %count = kiln.add %p_n, %pv_n : tensor<f32>, tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %sm, %ls, %rms, %ln, %mse, %mean_rows,
         %col, %xw, %lr, %centered, %norm, %max_abs, %count
      : tensor<37xf32>, tensor<6xf32>, tensor<6xi32>, tensor<6x37xf32>, tensor<6x37xf32>,
        tensor<6x37xf32>, tensor<6x37xf32>, tensor<f32>, tensor<f32>, tensor<f32>,
        tensor<6x37xf32>, tensor<2x20000xf32>, tensor<4x32x64xf32>, tensor<6x37xf32>,
        tensor<f32>, tensor<6xf32>, tensor<37xf32>, tensor<6x37xf32>, tensor<2xf32>,
        tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
