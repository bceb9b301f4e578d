// Over a memory budget, a norm's output that the backward reads again (for
// w2's gradient) is computed a second time there, from the input the norm's
// own gradient keeps anyway; within the budget nothing changes.
// RUN: kiln-opt %s --kiln-make-train-step=optimizer=sgd '--kiln-recompute=memory-budget=1000' 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-make-train-step=optimizer=sgd '--kiln-recompute=memory-budget=1000000000' 2>&1 | FileCheck %s --check-prefix=ROOM
// RUN: kilnc %s --train=sgd --memory-budget=1000 --no-merge-launches -o %t.kiln --stats 2>&1 | FileCheck %s --check-prefix=STATS
// The budget as kilnc reads it: bytes, or a number with a unit.
// RUN: kilnc %s --train=sgd --memory-budget=1KB -o %t.units.kiln 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: kilnc %s --train=sgd --memory-budget=1GiB -o %t.room.kiln 2>&1 | FileCheck %s --check-prefix=ROOM --allow-empty

// CHECK: warning: memory budget of 1000 bytes not met by 'forward_backward'
// CHECK-SAME: after recomputing 1 tensors
// CHECK-LABEL: func.func @forward_backward(
// CHECK: kiln.rms_norm
// CHECK: kiln.rms_norm
// CHECK: kiln.recomputed = [{arena_after = [[AFTER:[0-9]+]] : i64, arena_before = [[BEFORE:[0-9]+]] : i64, bytes = 4194304 : i64, op = "kiln.rms_norm at recompute.mlir:{{[0-9]+}}:8", ops = 1 : i64}]

// UNITS: warning: memory budget of 1000 bytes not met by 'forward_backward'

// ROOM-NOT: warning
// ROOM-NOT: kiln.recomputed

// STATS: recompute in forward_backward: kiln.rms_norm at recompute.mlir:{{[0-9]+}}:8 (4194304 bytes) computed again where the backward reads it: arena {{[0-9]+}} -> {{[0-9]+}} bytes

func.func @loss(
    %w1: tensor<1024x1024xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w1"},
    %g: tensor<1024xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %w2: tensor<1024x1024xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w2"},
    %w3: tensor<1024x1024xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w3"},
    %x: tensor<1024x1024xf32> {kiln.name = "x"}) -> tensor<f32> {
  %a = kiln.matmul %x, %w1 : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  %n = kiln.rms_norm %a, %g eps = 1.0e-05 : tensor<1024x1024xf32>, tensor<1024xf32>
  %b = kiln.matmul %n, %w2 : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  %c = kiln.tanh %b : tensor<1024x1024xf32>
  %d = kiln.matmul %c, %w3 : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  %e = kiln.tanh %d : tensor<1024x1024xf32>
  %l = kiln.reduce_mean %e dims = [0, 1] : tensor<1024x1024xf32>
  return %l : tensor<f32>
}
