// A loss that is a view of a parameter shares its buffer: train_step
// returns a copy taken before the update (see loss_is_parameter.mlir).
// RUN: kilnc %s --train=sgd --emit=cuda -o %t.cu
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" | FileCheck %s

// CHECK-LABEL: func.func @train_step
// CHECK: %[[VIEW:.*]] = kiln.reshape %arg0
// CHECK: %[[COPY:.*]] = kiln.cast %[[VIEW]] : tensor<f32> to tensor<f32>
// CHECK: return %[[COPY]],
func.func @loss(%p: tensor<1x1xf32> {kiln.param = #kiln.init<constant, value = 0.25>, kiln.name = "p"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %r = kiln.reshape %p : tensor<1x1xf32> -> tensor<f32>
  return %r : tensor<f32>
}
