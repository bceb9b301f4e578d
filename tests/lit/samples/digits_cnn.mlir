// samples/digits_cnn.mlir builds every training entry (kilnc stops before
// code generation, which has no conv2d kernel yet), its forward entry
// normalises with the running statistics, and its loss at the seed-1 initial
// parameters is kiln-ref's. The held-out evaluation copy of
// samples/make_gpu_bundle.sh (the batch "<64x" replaced by the held-out
// count) is a valid model whose every batch tensor has the new batch.
// RUN: kilnc %samples/digits_cnn.mlir --emit=mlir | FileCheck %s
// RUN: kiln-ref %samples/digits_cnn.mlir --function loss --random-seed 1 --init-params \
// RUN:   --int-range 10 --precision f64 --print | FileCheck %s --check-prefix=LOSS
// RUN: sed 's/<64x/<179x/g' %samples/digits_cnn.mlir >%t.eval.mlir
// RUN: kilnc %t.eval.mlir --inference --emit=mlir | FileCheck %s --check-prefix=EVAL

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: kiln.name = "bn1_running_mean", {{.*}}kiln.role = "state"
// CHECK: kiln.batch_norm {{.*}} eval dim = 3
// CHECK-LABEL: func.func @forward_backward(
// CHECK-LABEL: func.func @apply_update(
// CHECK-LABEL: func.func @train_step(

// LOSS: loss: tensor<f32> = [2.3384]
// LOSS: accuracy: tensor<f32> = [0.125]

// EVAL-LABEL: func.func @forward(
// EVAL-SAME: tensor<179x1x8x8xf32> {{.*}}kiln.name = "images"
// EVAL-SAME: tensor<179xi32> {{.*}}kiln.name = "labels"
// EVAL-NOT: tensor<64x
// EVAL: kiln.batch_norm {{.*}} eval dim = 3
// EVAL-NOT: func.func @train_step
