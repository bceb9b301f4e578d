// One gradient is a view returned as a parameter's gradient, another a view
// of that view (p and reshape(q) added). In train_step the update of q reads
// the reshape of the kernel that computes p's gradient, a view that stands
// between the two updates: the optimizer kernel may not take both (it would
// stand after the view that reads it). The update of p runs first, as a
// kernel of its own. Found by the graph fuzzer (tests/fuzz/graph).
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu
// RUN: kilnc %s --train=sgd --emit=mlir -o %t.mlir
// RUN: FileCheck %s < %t.mlir

// The fused step computes what the unfused one does.
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" -o %t.unfused.mlir
// RUN: kiln-ref %t.mlir --function train_step --random-seed 3 --print > %t.fused.txt
// RUN: kiln-ref %t.unfused.mlir --function train_step --random-seed 3 --print > %t.unfused.txt
// RUN: diff %t.fused.txt %t.unfused.txt
// RUN: FileCheck %s --check-prefix=REF < %t.fused.txt
// RUN: kiln-ref %t.mlir --function forward_backward --random-seed 3 --print | FileCheck %s --check-prefix=GRAD

// CHECK-LABEL: func.func @train_step
// CHECK: %[[P:.*]]:2 = kiln.fusion "pointwise"
// CHECK: %[[G:.*]] = kiln.broadcast_to
// CHECK: kiln.yield %[[G]], %{{.*}} : tensor<3xf32>, tensor<3xf32>
// CHECK: %[[VIEW:.*]] = kiln.reshape %[[P]]#0 {{.*}} : tensor<3xf32> -> tensor<1x3xf32>
// CHECK: %[[Q:.*]] = kiln.fusion "pointwise" (%{{.*}}, %[[VIEW]], %arg1)
// CHECK: return %{{.*}}, %[[P]]#1, %[[Q]] :

// REF: loss: tensor<f32>
// REF: p: tensor<3xf32>
// REF: q: tensor<1x3xf32>
// GRAD: grad.p: tensor<3xf32> = [1, 1, 1]
// GRAD: grad.q: tensor<1x3xf32> = [1, 1, 1]
func.func @loss(
    %p: tensor<3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %q: tensor<1x3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %r = kiln.reshape %q : tensor<1x3xf32> -> tensor<3xf32>
  %s = kiln.add %p, %r : tensor<3xf32>, tensor<3xf32>
  %loss = kiln.reduce_sum %s dims = [0] : tensor<3xf32>
  return %loss : tensor<f32>
}
