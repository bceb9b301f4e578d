// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// q, k, v are rows of projections, [B, T, H, D]; the transposes to the
// [B, H, T, D] of kiln.attention, and of its result back, join the attention
// groups (the kernels address the untransposed buffers through strides). The
// transposed q is also read by the backward: each group gets its own copy.
// The forward result is stored transposed; the backward reads it back
// through the inverse transpose, inside its own group, with the forward's
// row log-sum-exp.
// CHECK-LABEL: func.func @attention_rows
// CHECK-SAME: (%[[Q:.*]]: tensor<2x8x4x16xf32>, %[[K:.*]]: tensor<2x8x4x16xf32>, %[[V:.*]]: tensor<2x8x4x16xf32>, %[[DO:.*]]: tensor<2x8x4x16xf32>)
// CHECK-NOT: kiln.fusion "pointwise"
// CHECK: %[[O:.*]]:2 = kiln.fusion "attention" (%[[Q]], %[[K]], %[[V]])
// CHECK: ^bb0(%[[A:.*]]: tensor<2x8x4x16xf32>, %[[B:.*]]: tensor<2x8x4x16xf32>, %[[C:.*]]: tensor<2x8x4x16xf32>):
// CHECK-NEXT: %[[TA:.*]] = kiln.transpose %[[A]] perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[TB:.*]] = kiln.transpose %[[B]] perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[TC:.*]] = kiln.transpose %[[C]] perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[R:.*]], %[[L:.*]] = kiln.attention %[[TA]], %[[TB]], %[[TC]] causal with_row_lse
// CHECK-NEXT: %[[TR:.*]] = kiln.transpose %[[R]] perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
// CHECK-NEXT: kiln.yield %[[L]], %[[TR]] : tensor<2x4x8xf32>, tensor<2x8x4x16xf32>
// CHECK: %[[G:.*]]:3 = kiln.fusion "attention" (%[[Q]], %[[K]], %[[V]], %[[DO]], %[[O]]#1, %[[O]]#0)
// CHECK: ^bb0({{.*}}, %[[GL:.*]]: tensor<2x4x8xf32>):
// CHECK-COUNT-5: kiln.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32>
// CHECK-NEXT: kiln.attention_backward {{.*}} causal row_lse(%[[GL]] : tensor<2x4x8xf32>)
// CHECK-COUNT-3: kiln.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion "pointwise"
// CHECK: return %[[O]]#1, %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @attention_rows(%q0: tensor<2x8x4x16xf32>, %k0: tensor<2x8x4x16xf32>,
                          %v0: tensor<2x8x4x16xf32>, %do0: tensor<2x8x4x16xf32>)
    -> (tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>) {
  %q = kiln.transpose %q0 perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32>
  %k = kiln.transpose %k0 perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32>
  %v = kiln.transpose %v0 perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32>
  %o = kiln.attention %q, %k, %v causal
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  %o1 = kiln.transpose %o perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
  %do = kiln.transpose %do0 perm = [0, 2, 1, 3] : tensor<2x8x4x16xf32>
  %dq, %dk, %dv = kiln.attention_backward %q, %k, %v, %o, %do causal
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  %dq1 = kiln.transpose %dq perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
  %dk1 = kiln.transpose %dk perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
  %dv1 = kiln.transpose %dv perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
  return %o1, %dq1, %dk1, %dv1
      : tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>
}

// A transpose that moves the head dim, and a result that something other
// than attention reads untransposed, stay kernels of their own (the two
// independent pointwise kernels after the attention share one launch).
// CHECK-LABEL: func.func @kept_layouts
// CHECK: kiln.fusion "pointwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.transpose %{{.*}} perm = [0, 1, 3, 2]
// CHECK: %[[O:.*]] = kiln.fusion "attention"
// CHECK-NOT: kiln.transpose
// CHECK: kiln.attention
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%[[O]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.transpose
// CHECK-NEXT: kiln.exp
func.func @kept_layouts(%q0: tensor<1x2x16x8xf32>, %k: tensor<1x2x8x16xf32>)
    -> (tensor<1x8x2x16xf32>, tensor<1x2x8x16xf32>) {
  %q = kiln.transpose %q0 perm = [0, 1, 3, 2] : tensor<1x2x16x8xf32>
  %o = kiln.attention %q, %k, %k : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  %t = kiln.transpose %o perm = [0, 2, 1, 3] : tensor<1x2x8x16xf32>
  %e = kiln.exp %o : tensor<1x2x8x16xf32>
  return %t, %e : tensor<1x8x2x16xf32>, tensor<1x2x8x16xf32>
}
