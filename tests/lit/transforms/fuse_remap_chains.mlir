// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// The backward of rope (scale by a sign vector, rope, scale again) after a
// transpose: one pointwise kernel computes the scaled transpose at the two
// positions each rope element reads, instead of three kernels with buffers
// between them.
// CHECK-LABEL: func.func @rope_backward
// CHECK: %[[F:.*]] = kiln.fusion "pointwise" (%arg0)
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<2x4x8x16xf32>):
// CHECK-NEXT: %[[S:.*]] = kiln.constant dense<{{.*}}> : tensor<16xf32>
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %[[A]] perm = [0, 2, 1, 3]
// CHECK-NEXT: %[[M:.*]] = kiln.mul %[[T]], %[[S]]
// CHECK-NEXT: %[[R:.*]] = kiln.rope %[[M]]
// CHECK-NEXT: %[[G:.*]] = kiln.mul %[[R]], %[[S]]
// CHECK-NEXT: kiln.yield %[[G]]
// CHECK-NOT: kiln.fusion
// CHECK: return %[[F]]
func.func @rope_backward(%g: tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]> : tensor<16xf32>
  %t = kiln.transpose %g perm = [0, 2, 1, 3] : tensor<2x4x8x16xf32>
  %m = kiln.mul %t, %s : tensor<2x8x4x16xf32>, tensor<16xf32>
  %r = kiln.rope %m : tensor<2x8x4x16xf32>
  %d = kiln.mul %r, %s : tensor<2x8x4x16xf32>, tensor<16xf32>
  return %d : tensor<2x8x4x16xf32>
}

// A value also needed elsewhere is computed at the root's own positions
// only: the one read at remapped positions is not a result, so here the
// scaled value is a kernel of its own and the rope reads its buffer.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E:.*]] = kiln.fusion "pointwise" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield
// CHECK: %[[R:.*]] = kiln.fusion "pointwise" (%[[E]])
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.rope
// CHECK-NEXT: kiln.yield
// CHECK: return %[[R]], %[[E]]
func.func @shared(%x: tensor<1x4x2x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>) {
  %e = kiln.exp %x : tensor<1x4x2x8xf32>
  %r = kiln.rope %e : tensor<1x4x2x8xf32>
  return %r, %e : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>
}

// A reshape of a computed value joins the chain (a view needs no buffer of
// its own inside a kernel).
// CHECK-LABEL: func.func @reshaped
// CHECK: %[[V:.*]] = kiln.fusion "pointwise" (%arg0)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.neg
// CHECK-NEXT: kiln.reshape
// CHECK-NEXT: kiln.transpose
// CHECK-NEXT: kiln.yield
// CHECK: return %[[V]]
func.func @reshaped(%y: tensor<6x4xf32>) -> tensor<3x8xf32> {
  %n = kiln.neg %y : tensor<6x4xf32>
  %s = kiln.reshape %n : tensor<6x4xf32> -> tensor<8x3xf32>
  %t = kiln.transpose %s perm = [1, 0] : tensor<8x3xf32>
  return %t : tensor<3x8xf32>
}
