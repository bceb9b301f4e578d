// In p + q the gradient of p and that of q are one value. Each lands in a
// resident buffer of its own, which a kernel writes: the second is a copy
// (a cast to its own type). Found by the graph fuzzer (tests/fuzz/graph).
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.sgd.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu
// RUN: kilnc %s --train=sgd --emit=mlir -o %t.mlir
// RUN: kiln-ref %t.mlir --function forward_backward --random-seed 1 --print | FileCheck %s --check-prefix=REF

// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = kiln.broadcast_to
// CHECK: %[[COPY:.*]] = kiln.cast %[[G]] : tensor<3xf32> to tensor<3xf32>
// CHECK: return %{{.*}}, %[[G]], %[[COPY]] :

// REF: grad.p: tensor<3xf32> = [1, 1, 1]
// REF: grad.q: tensor<3xf32> = [1, 1, 1]
func.func @loss(
    %p: tensor<3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "p"},
    %q: tensor<3xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "q"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %s = kiln.add %p, %q : tensor<3xf32>, tensor<3xf32>
  %loss = kiln.reduce_sum %s dims = [0] : tensor<3xf32>
  return %loss : tensor<f32>
}
