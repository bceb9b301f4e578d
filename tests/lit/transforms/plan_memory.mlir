// RUN: kiln-opt %s --kiln-fuse --kiln-plan-memory | FileCheck %s

// Parameters and optimizer state are resident buffers named like their
// arguments; the update is written in place; inputs and intermediates get
// arena offsets; a reshape aliases its operand's bytes.
// CHECK-LABEL: func.func @step
// CHECK-SAME: kiln.buffer = {buffer = "w", offset = 0 : i64, size = 64 : i64}
// CHECK-SAME: kiln.buffer = {buffer = "arena", offset = {{[0-9]+}} : i64, size = 64 : i64}, kiln.name = "x"
// CHECK-SAME: attributes {kiln.arena_size = [[A:[0-9]+]] : i64, kiln.peak_live_bytes = [[A]] : i64, kiln.reuse_delay = 0 : i64}
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

// An element-wise kernel may write its result over an operand that dies
// there only when each element of the operand is read while its own
// position is computed: not when a rope computes the scaled operand at its
// rotation partner's position too (another thread may have overwritten
// that element), nor when a larger root reads it broadcast.
// Here exp(x) is written over x (offset 0), which then dies in the rope's
// kernel: its result gets bytes of its own.
// CHECK-LABEL: func.func @no_reuse_under_remapping
// CHECK-SAME: kiln.buffer = {buffer = "arena", offset = 0 : i64, size = 256 : i64}, kiln.name = "x"
// CHECK: kiln.fusion "pointwise" (%arg0) {kiln.buffers = [{buffer = "arena", offset = 0 : i64
// CHECK: kiln.fusion "pointwise" (%{{.*}}#0, %arg1) {kiln.buffers = [{buffer = "arena", offset = {{[1-9][0-9]*}} : i64
// CHECK: kiln.rope
func.func @no_reuse_under_remapping(%x: tensor<1x4x2x8xf32> {kiln.role = "input", kiln.name = "x"},
                                    %s: tensor<8xf32> {kiln.role = "input", kiln.name = "s"})
    -> (tensor<1x4x2x8xf32> {kiln.role = "output", kiln.name = "y"}, tensor<1x4x2x8xf32> {kiln.role = "output", kiln.name = "z"}) {
  %a = kiln.exp %x : tensor<1x4x2x8xf32>
  %b = kiln.neg %a : tensor<1x4x2x8xf32>
  %m = kiln.mul %a, %s : tensor<1x4x2x8xf32>, tensor<8xf32>
  %r = kiln.rope %m : tensor<1x4x2x8xf32>
  return %r, %b : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>
}
