// A loss that is a parameter (or a view of one) is read after train_step's
// update overwrites it: the step returns a copy taken before the update.
// Found by the graph fuzzer (tests/fuzz/graph).
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.cu
// RUN: kilnc %s --train=adamw --precision=bf16 --emit=cuda -o %t.bf16.cu
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[COPY:.*]] = kiln.cast %arg0 : tensor<f32> to tensor<f32>
// CHECK: %[[NEW:.*]] = kiln.sub %arg0
// CHECK: return %[[COPY]], %[[NEW]]
func.func @loss(%p: tensor<f32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p"}) -> (tensor<f32> {kiln.name = "loss"}) {
  return %p : tensor<f32>
}
