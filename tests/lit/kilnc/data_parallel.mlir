// kilnc --data-parallel plans the gradients' all-reduces: buckets in the
// order the backward finishes the gradients (the last layer's first), the
// first closed at --first-bucket-bytes, the others at --bucket-bytes (each
// closes once it holds at least its size); each all-reduce follows the
// launch that finishes its last gradient and is waited for by the first
// launch that reads one (train_step: the optimizer, after forward_backward's
// launches; forward_backward: the end of the entry).
// RUN: kilnc %s --data-parallel --first-bucket-bytes=256 --bucket-bytes=1024 --stats -o %t.kiln 2>&1 | FileCheck %s
// RUN: kilnc %s --data-parallel --stats -o %t.default.kiln 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: kilnc %s --stats -o %t.single.kiln 2>&1 | FileCheck %s --check-prefix=SINGLE
// RUN: not kilnc %s --bucket-bytes=1024 -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=NEEDS
// RUN: not kilnc %s --data-parallel --inference -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=INFERENCE
// RUN: not kilnc %s --data-parallel --bucket-bytes=0 -o %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=ZERO

// train_step runs forward_backward's 5 launches, then apply_update's one.
// CHECK-LABEL: entry train_step: 6 launches
// CHECK: data parallel: entry forward_backward: 2 gradient buckets, 4 tensors, 2564 bytes averaged over the ranks
// CHECK-NEXT: bucket 0: 256 bytes, 1 tensor (grad.w2), all-reduce after launch 2 (kiln_merged_{{[0-9a-f]+}}), waited for by the end of the entry
// CHECK-NEXT: bucket 1: 2308 bytes, 3 tensors (grad.b2, grad.b1, grad.w1), all-reduce after launch 4 (kiln_gemm_{{[0-9a-f]+}}), waited for by the end of the entry
// CHECK-NEXT: data parallel: entry train_step: 2 gradient buckets, 4 tensors, 2564 bytes averaged over the ranks
// CHECK-NEXT: bucket 0: 256 bytes, 1 tensor (grad.w2), all-reduce after launch 2 (kiln_merged_{{[0-9a-f]+}}), waited for by launch 5 (kiln_optimizer_{{[0-9a-f]+}})
// CHECK-NEXT: bucket 1: 2308 bytes, 3 tensors (grad.b2, grad.b1, grad.w1), all-reduce after launch 4 (kiln_gemm_{{[0-9a-f]+}}), waited for by launch 5 (kiln_optimizer_{{[0-9a-f]+}})

// Under the default 1 MiB first bucket everything is one bucket.
// DEFAULT: data parallel: entry train_step: 1 gradient buckets, 4 tensors, 2564 bytes
// DEFAULT-NEXT: bucket 0: 2564 bytes, 4 tensors (grad.w2, grad.b2, grad.b1, grad.w1), all-reduce after launch 4

// SINGLE-NOT: data parallel
// NEEDS: kilnc: error: --bucket-bytes and --first-bucket-bytes need --data-parallel
// INFERENCE: kilnc: error: --data-parallel needs training entries, not --inference
// ZERO: kilnc: error: --bucket-bytes and --first-bucket-bytes must be positive

func.func @loss(
    %w1: tensor<8x64xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %b1: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b1"},
    %w2: tensor<64x1xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %b2: tensor<1xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b2"},
    %x: tensor<64x8xf32> {kiln.name = "x"},
    %y: tensor<64x1xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w1 : tensor<64x8xf32>, tensor<8x64xf32>
  %1 = kiln.add %0, %b1 : tensor<64x64xf32>, tensor<64xf32>
  %2 = kiln.tanh %1 : tensor<64x64xf32>
  %3 = kiln.matmul %2, %w2 : tensor<64x64xf32>, tensor<64x1xf32>
  %4 = kiln.add %3, %b2 : tensor<64x1xf32>, tensor<1xf32>
  %5 = kiln.mse_loss %4, %y reduction = mean : tensor<64x1xf32>
  return %5 : tensor<f32>
}
