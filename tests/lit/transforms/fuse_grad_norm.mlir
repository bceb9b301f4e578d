// The gradient statistics and the clip by global norm of a training step:
// every whole-gradient reduction (max |g|, non-finite count, the sum of
// squares) of every parameter, with the scalar ops that combine them, is one
// multi-tensor fusion; the optimizer reads the clip factor it computes.
// RUN: kiln-opt %samples/mlp.mlir '--kiln-make-train-step=clip-norm=1 statistics=1' --kiln-fuse | FileCheck %s
// RUN: kilnc %samples/mlp.mlir --train=adamw --clip-norm=1 --grad-stats --no-merge-launches -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS

// CHECK-LABEL: func.func @apply_update
// CHECK-NEXT: %[[N:.*]]:4 = kiln.fusion "reduction" (%arg12, %arg13, %arg14, %arg15)
// CHECK-DAG: kiln.reduce_max %{{.*}} dims = [0, 1] : tensor<8x64xf32>
// CHECK-DAG: kiln.reduce_max %{{.*}} dims = [0] : tensor<64xf32>
// CHECK-DAG: kiln.reduce_sum %{{.*}} dims = [0, 1] : tensor<64x1xf32>
// CHECK-DAG: kiln.reduce_sum %{{.*}} dims = [0] : tensor<1xf32>
// CHECK: kiln.sqrt
// CHECK: kiln.min
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: kiln.fusion "optimizer" ({{.*}}%[[N]]#3
// CHECK-NOT: kiln.fusion
// CHECK: return {{.*}}%[[N]]#{{[0-2]}}, %[[N]]#{{[0-2]}}, %[[N]]#{{[0-2]}} :

// In train_step the gradients come from the backward kernels; their norm
// and statistics are still one fusion feeding the optimizer.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[T:.*]]:4 = kiln.fusion "reduction"
// CHECK-NEXT: ^bb0
// CHECK-NOT: kiln.fusion
// CHECK: kiln.fusion "optimizer" ({{.*}}%[[T]]#3
// CHECK-NOT: kiln.fusion
// CHECK: return

// STATS: entry apply_update: 2 launches
// STATS: entry train_step: 9 launches
