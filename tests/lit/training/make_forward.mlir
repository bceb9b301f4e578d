// RUN: kiln-opt %s --kiln-make-forward="function=f" | FileCheck %s
// RUN: not kiln-opt %s --kiln-make-forward 2>&1 | FileCheck %s --check-prefix=FN

// The function becomes the only entry, `forward`; arguments and results get
// their roles, unnamed ones their default names, and nothing else changes.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %{{.*}}: tensor<8xf32> {kiln.name = "w", kiln.param = #kiln.init<zeros>, kiln.role = "param"}
// CHECK-SAME: %{{.*}}: tensor<4x8xf32> {kiln.name = "x", kiln.role = "input"}
// CHECK-SAME: -> (tensor<4x8xf32> {kiln.name = "y", kiln.role = "output"}, tensor<f32> {kiln.name = "result1", kiln.role = "output"})
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.reduce_sum
// CHECK-NEXT: return
// CHECK-NOT: func.func

// FN: error: kiln-make-forward: no function named 'loss'
func.func @f(%w: tensor<8xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "w"},
             %x: tensor<4x8xf32> {kiln.name = "x"})
    -> (tensor<4x8xf32> {kiln.name = "y"}, tensor<f32>) {
  %0 = kiln.add %x, %w : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.reduce_sum %0 dims = [0, 1] : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<f32>
}
