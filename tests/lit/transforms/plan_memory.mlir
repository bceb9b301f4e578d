// RUN: kiln-opt %s --kiln-fuse --kiln-plan-memory | FileCheck %s

// Parameters and optimizer state are resident buffers named like their
// arguments; the update is written in place; inputs and intermediates get
// arena offsets; a reshape aliases its operand's bytes.
// CHECK-LABEL: func.func @step
// CHECK-SAME: kiln.buffer = {buffer = "w", offset = 0 : i64, size = 64 : i64}
// CHECK-SAME: kiln.buffer = {buffer = "arena", offset = {{[0-9]+}} : i64, size = 64 : i64}, kiln.name = "x"
// CHECK-SAME: attributes {kiln.arena_size = [[A:[0-9]+]] : i64, kiln.peak_live_bytes = [[A]] : i64}
// CHECK: kiln.fusion "pointwise"
// CHECK: kiln.buffers = [{buffer = "arena", offset = [[T:[0-9]+]] : i64, size = 64 : i64}]
// CHECK: kiln.reshape
// CHECK-SAME: kiln.buffers = [{buffer = "arena", offset = [[T]] : i64, size = 64 : i64}]
// CHECK: kiln.fusion "pointwise"
// CHECK: kiln.buffers = [{buffer = "w", offset = 0 : i64, size = 64 : i64}]
func.func @step(%w: tensor<16xf32> {kiln.role = "param", kiln.name = "w"},
                %x: tensor<4x4xf32> {kiln.role = "input", kiln.name = "x"})
    -> (tensor<16xf32> {kiln.role = "param", kiln.name = "w", kiln.updates = 0 : i64}) {
  %0 = kiln.exp %x : tensor<4x4xf32>
  %1 = kiln.reshape %0 : tensor<4x4xf32> -> tensor<16xf32>
  %2 = kiln.sub %w, %1 : tensor<16xf32>, tensor<16xf32>
  return %2 : tensor<16xf32>
}
