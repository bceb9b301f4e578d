// Every optimizer compiles to an artifact; the update is one multi-tensor
// kernel in apply_update (plain SGD uses no step count: nothing is left of it).
// RUN: kilnc %s --train=sgd -o %t.sgd.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=sgd --momentum=0.9 --nesterov --weight-decay=0.01 -o %t.nesterov.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=adam -o %t.adam.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=adamw --clip-value=0.5 --grad-scale=0.5 --grad-noise=0.1 -o %t.adamw.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=sgd --emit=mlir | FileCheck %s --check-prefix=SGD

// CHECK: entry apply_update: 1 launches
// CHECK: entry train_step:

// SGD-LABEL: func.func @apply_update
// SGD-NOT: kiln.cast
// SGD: kiln.fusion "optimizer"
func.func @loss(
    %w: tensor<8x16xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w"},
    %b: tensor<16xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %x: tensor<32x8xf32> {kiln.name = "x"},
    %y: tensor<32x16xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<32x8xf32>, tensor<8x16xf32>
  %1 = kiln.add %0, %b : tensor<32x16xf32>, tensor<16xf32>
  %2 = kiln.tanh %1 : tensor<32x16xf32>
  %3 = kiln.mse_loss %2, %y reduction = mean : tensor<32x16xf32>
  return %3 : tensor<f32>
}
