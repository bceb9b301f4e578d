// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// An mse written from primitives: the prologue (sub, square) is computed
// while loading, the epilogue (scaling) when storing: one kernel.
// CHECK-LABEL: func.func @mse
// CHECK-NEXT: %[[L:.*]] = kiln.fusion "reduction" (%arg0, %arg1)
// CHECK: kiln.sub
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.reduce_mean
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[L]]
func.func @mse(%a: tensor<64x1xf32>, %b: tensor<64x1xf32>) -> tensor<f32> {
  %d = kiln.sub %a, %b : tensor<64x1xf32>, tensor<64x1xf32>
  %s = kiln.mul %d, %d : tensor<64x1xf32>, tensor<64x1xf32>
  %m = kiln.reduce_mean %s dims = [0, 1] : tensor<64x1xf32>
  %h = kiln.constant dense<0.5> : tensor<f32>
  %l = kiln.mul %m, %h : tensor<f32>, tensor<f32>
  return %l : tensor<f32>
}

// A mean as sum / n; the summed product is also needed later, so it is a
// second result, stored while it is reduced.
// CHECK-LABEL: func.func @mean
// CHECK-NEXT: %[[M:.*]]:2 = kiln.fusion "reduction" (%arg0, %arg1)
// CHECK: kiln.mul
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: kiln.div
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%[[M]]#0)
// CHECK: return %[[M]]#1
func.func @mean(%x: tensor<6x37xf32>, %w: tensor<37xf32>) -> (tensor<6xf32>, tensor<6x37xf32>) {
  %p = kiln.mul %x, %w : tensor<6x37xf32>, tensor<37xf32>
  %s = kiln.reduce_sum %p dims = [1] : tensor<6x37xf32>
  %n = kiln.constant dense<37.0> : tensor<f32>
  %m = kiln.div %s, %n : tensor<6xf32>, tensor<f32>
  %q = kiln.tanh %p : tensor<6x37xf32>
  return %m, %q : tensor<6xf32>, tensor<6x37xf32>
}

// softmax from primitives: max, exp(x - max), sum and the division over
// the same rows become one row kernel.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[S:.*]] = kiln.fusion "reduction" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reduce_max
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: kiln.div
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[S]]
func.func @softmax(%x: tensor<6x37xf32>) -> tensor<6x37xf32> {
  %m = kiln.reduce_max %x dims = [1] keepdim : tensor<6x37xf32>
  %d = kiln.sub %x, %m : tensor<6x37xf32>, tensor<6x1xf32>
  %e = kiln.exp %d : tensor<6x37xf32>
  %s = kiln.reduce_sum %e dims = [1] keepdim : tensor<6x37xf32>
  %y = kiln.div %e, %s : tensor<6x37xf32>, tensor<6x1xf32>
  return %y : tensor<6x37xf32>
}

// log-softmax from primitives, broadcast_to written out: one row kernel.
// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT: %[[S:.*]] = kiln.fusion "reduction" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reduce_max
// CHECK-NEXT: kiln.broadcast_to
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: kiln.log
// CHECK-NEXT: kiln.sub
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[S]]
func.func @log_softmax(%x: tensor<2x3x37xbf16>) -> tensor<2x3x37xbf16> {
  %m = kiln.reduce_max %x dims = [2] keepdim : tensor<2x3x37xbf16>
  %b = kiln.broadcast_to %m : tensor<2x3x1xbf16> -> tensor<2x3x37xbf16>
  %d = kiln.sub %x, %b : tensor<2x3x37xbf16>, tensor<2x3x37xbf16>
  %e = kiln.exp %d : tensor<2x3x37xbf16>
  %s = kiln.reduce_sum %e dims = [2] keepdim : tensor<2x3x37xbf16>
  %l = kiln.log %s : tensor<2x3x1xbf16>
  %y = kiln.sub %d, %l : tensor<2x3x37xbf16>, tensor<2x3x1xbf16>
  return %y : tensor<2x3x37xbf16>
}

// rms_norm from primitives: x * rsqrt(mean(x^2) + eps) * g in one kernel.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NEXT: %[[R:.*]] = kiln.fusion "reduction" (%arg0, %arg1)
// CHECK: kiln.constant dense<9.99999974E-6>
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.reduce_mean
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.rsqrt
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.mul
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @rms_norm(%x: tensor<4x32x64xf32>, %g: tensor<64xf32>) -> tensor<4x32x64xf32> {
  %sq = kiln.mul %x, %x : tensor<4x32x64xf32>, tensor<4x32x64xf32>
  %ms = kiln.reduce_mean %sq dims = [2] keepdim : tensor<4x32x64xf32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %t = kiln.add %ms, %eps : tensor<4x32x1xf32>, tensor<f32>
  %r = kiln.rsqrt %t : tensor<4x32x1xf32>
  %xn = kiln.mul %x, %r : tensor<4x32x64xf32>, tensor<4x32x1xf32>
  %y = kiln.mul %xn, %g : tensor<4x32x64xf32>, tensor<64xf32>
  return %y : tensor<4x32x64xf32>
}

// A per-row sum broadcast along the wrong dim (numpy aligns [8] with the
// reduced dim) is not the row's value: the subtraction stays outside.
// CHECK-LABEL: func.func @not_a_row_pattern
// CHECK-NEXT: %[[S:.*]] = kiln.fusion "reduction" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%arg0, %[[S]])
func.func @not_a_row_pattern(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s = kiln.reduce_sum %x dims = [1] : tensor<8x8xf32>
  %y = kiln.sub %x, %s : tensor<8x8xf32>, tensor<8xf32>
  return %y : tensor<8x8xf32>
}

// Whole-tensor reductions of different tensors that meet in scalar ops
// share one multi-tensor fusion (a global norm and a max |x|).
// CHECK-LABEL: func.func @global_norm
// CHECK-NEXT: %[[N:.*]]:2 = kiln.fusion "reduction" (%arg0, %arg1, %arg2)
// CHECK-COUNT-3: kiln.reduce_sum
// CHECK: kiln.sqrt
// CHECK: kiln.reduce_max
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[N]]#0, %[[N]]#1
func.func @global_norm(%a: tensor<8x64xf32>, %b: tensor<64xf32>, %c: tensor<1xf32>)
    -> (tensor<f32>, tensor<f32>) {
  %a2 = kiln.mul %a, %a : tensor<8x64xf32>, tensor<8x64xf32>
  %sa = kiln.reduce_sum %a2 dims = [0, 1] : tensor<8x64xf32>
  %b2 = kiln.mul %b, %b : tensor<64xf32>, tensor<64xf32>
  %sb = kiln.reduce_sum %b2 dims = [0] : tensor<64xf32>
  %c2 = kiln.mul %c, %c : tensor<1xf32>, tensor<1xf32>
  %sc = kiln.reduce_sum %c2 dims = [0] : tensor<1xf32>
  %t = kiln.add %sa, %sb : tensor<f32>, tensor<f32>
  %u = kiln.add %t, %sc : tensor<f32>, tensor<f32>
  %n = kiln.sqrt %u : tensor<f32>
  %ab = kiln.abs %a : tensor<8x64xf32>
  %m = kiln.reduce_max %ab dims = [0, 1] : tensor<8x64xf32>
  return %n, %m : tensor<f32>, tensor<f32>
}
