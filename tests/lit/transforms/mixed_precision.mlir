// RUN: kiln-opt %s --kiln-mixed-precision | FileCheck %s
// RUN: kiln-opt %s --kiln-mixed-precision --kiln-make-train-step | FileCheck %s --check-prefix=TRAIN
// RUN: kilnc %s --precision=bf16 --emit=mlir | FileCheck %s --check-prefix=KILNC

// Parameters are stored in bf16, data inputs stay f32 and are converted on
// entry, constants are converted, the loss comes back in f32.
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %arg0: tensor<8x4xbf16> {kiln.name = "w"
// CHECK-SAME: %arg1: tensor<2x8xf32> {kiln.name = "x"}
// CHECK-SAME: -> tensor<f32>
// CHECK: %[[X:.*]] = kiln.cast %arg1 : tensor<2x8xf32> to tensor<2x8xbf16>
// CHECK: kiln.matmul %[[X]], %arg0 : tensor<2x8xbf16>, tensor<8x4xbf16>
// CHECK: kiln.constant dense<5.000000e-01> : tensor<bf16>
// CHECK: %[[L:.*]] = kiln.reduce_sum {{.*}} : tensor<2x4xbf16>
// CHECK: %[[F:.*]] = kiln.cast %[[L]] : tensor<bf16> to tensor<f32>
// CHECK: return %[[F]] : tensor<f32>

// The training step keeps an f32 master copy of the bf16 parameter.
// TRAIN-LABEL: func.func @apply_update(
// TRAIN-SAME: tensor<8x4xbf16> {kiln.name = "w", kiln.role = "param"}
// TRAIN-SAME: tensor<8x4xf32> {kiln.name = "master.w", kiln.role = "master_weight"}

// KILNC: func.func @train_step(
// KILNC-SAME: tensor<8x4xbf16> {kiln.buffer = {buffer = "w"
func.func @loss(%w: tensor<8x4xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w"},
                %x: tensor<2x8xf32> {kiln.name = "x"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<2x8xf32>, tensor<8x4xf32>
  %c = kiln.constant dense<0.5> : tensor<f32>
  %1 = kiln.mul %0, %c : tensor<2x4xf32>, tensor<f32>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<2x4xf32>
  return %2 : tensor<f32>
}
