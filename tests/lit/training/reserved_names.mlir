// The training entries' own inputs `lr` and `step` cannot be model inputs:
// a located error (line and column within each split) instead of an artifact with two inputs of one name.
// RUN: not kiln-opt %s --split-input-file --kiln-make-train-step 2>&1 | FileCheck %s

// CHECK: :17: error: argument 'step' of @loss: 'lr' and 'step' are reserved
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
                %step: tensor<3xf32> {kiln.name = "step"}) -> tensor<f32> {
  %0 = kiln.mul %w, %step : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.reduce_sum %0 dims = [0] : tensor<3xf32>
  return %1 : tensor<f32>
}

// -----

// CHECK: :17: error: argument 'lr' of @loss
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
                %x: tensor<3xf32> {kiln.name = "lr"}) -> tensor<f32> {
  %0 = kiln.mul %w, %x : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.reduce_sum %0 dims = [0] : tensor<3xf32>
  return %1 : tensor<f32>
}
