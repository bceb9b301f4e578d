// kilnc reports a model input named like a training entry's own input at the
// argument, and writes nothing.
// RUN: not kilnc %s -o %t.kiln 2>&1 | FileCheck %s
// RUN: not test -e %t.kiln
// CHECK: reserved_names.mlir:[[@LINE+2]]:17: error: argument 'lr' of @loss: 'lr' and 'step' are reserved
func.func @loss(%w: tensor<3xf32> {kiln.param = #kiln.init<ones>, kiln.name = "w"},
                %x: tensor<3xf32> {kiln.name = "lr"}) -> tensor<f32> {
  %0 = kiln.mul %w, %x : tensor<3xf32>, tensor<3xf32>
  %1 = kiln.reduce_sum %0 dims = [0] : tensor<3xf32>
  return %1 : tensor<f32>
}
