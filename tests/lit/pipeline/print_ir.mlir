// --mlir-print-ir-after-all shows the IR after every kiln pass of kilnc's
// pipeline; --mlir-print-ir-after picks passes by name.
// RUN: kilnc %s --inference --emit=mlir -o %t.mlir --mlir-print-ir-after-all 2>&1 | FileCheck %s
// RUN: kilnc %s --inference --emit=mlir -o %t.mlir --mlir-print-ir-after=kiln-fuse 2>&1 | FileCheck %s --check-prefix=FUSE

// CHECK: IR Dump After KilnMakeForward (kiln-make-forward)
// CHECK: func.func @forward
// CHECK-NOT: kiln.fusion
// CHECK: IR Dump After KilnFuse (kiln-fuse)
// CHECK: kiln.fusion "pointwise"
// CHECK-NOT: kiln.arena_size
// CHECK: IR Dump After KilnPlanMemory (kiln-plan-memory)
// CHECK: kiln.arena_size

// FUSE-NOT: IR Dump After KilnMakeForward
// FUSE: IR Dump After KilnFuse (kiln-fuse)
// FUSE: kiln.fusion "pointwise"
// FUSE-NOT: IR Dump After
func.func @loss(%a: tensor<4x8xf32> {kiln.name = "a"}, %b: tensor<8xf32> {kiln.name = "b"})
    -> (tensor<4x8xf32> {kiln.name = "y"}) {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
