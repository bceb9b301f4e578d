// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s -split-input-file -verify-diagnostics --mlir-print-op-generic > /dev/null

// CHECK-LABEL: func.func @add_broadcast
// CHECK: kiln.add %{{.*}}, %{{.*}} : tensor<4x1x8xf32>, tensor<3x1xf32>
func.func @add_broadcast(%a: tensor<4x1x8xf32>, %b: tensor<3x1xf32>) -> tensor<4x3x8xf32> {
  %0 = kiln.add %a, %b : tensor<4x1x8xf32>, tensor<3x1xf32>
  return %0 : tensor<4x3x8xf32>
}
