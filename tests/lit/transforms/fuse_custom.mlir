// RUN: kiln-opt %s --kiln-fuse | FileCheck %s

// A user kernel is a fusion of its own: the element-wise producer and
// consumer around it are not fused into it (nor it into them), even though
// they would fuse with each other across it.
// CHECK-LABEL: func.func @around
// CHECK: %[[P:.*]] = kiln.fusion "pointwise" (%arg0)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: kiln.yield
// CHECK: %[[C:.*]] = kiln.fusion "custom" (%[[P]], %arg1)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: kiln.custom "fwd" from "k.cu"
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion "pointwise" (%[[C]], %[[P]])
// CHECK-NOT: kiln.custom
// CHECK: return
func.func @around(%x: tensor<4x8xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = kiln.exp %x : tensor<4x8xf32>
  %y = kiln.custom "fwd" from "k.cu" (%e, %s)
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = kiln.tanh %y : tensor<4x8xf32>
  %z = kiln.add %t, %e : tensor<4x8xf32>, tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// A backward op is one too (the operand it reads twice enters once); its
// two results leave the one fusion.
// CHECK-LABEL: func.func @backward
// CHECK: %[[B:.*]]:2 = kiln.fusion "custom" (%arg0, %arg1, %arg2)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: kiln.custom_backward "bwd" from "k.cu"
// CHECK-NEXT: kiln.yield
func.func @backward(%x: tensor<4x8xf32>, %s: tensor<8xf32>, %y: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<8xf32>) {
  %dx, %ds = kiln.custom_backward "bwd" from "k.cu" inputs(%x, %s) outputs(%y)
      output_grads(%y)
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
        -> (tensor<4x8xf32>, tensor<8xf32>)
  %n = kiln.neg %dx : tensor<4x8xf32>
  return %n, %ds : tensor<4x8xf32>, tensor<8xf32>
}
