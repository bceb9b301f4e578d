// An inference entry of a function whose results have no kiln.name (as the
// shipped samples' loss) compiles: the host sees them as result0, ...
// RUN: kilnc %samples/mlp.mlir --inference --function loss --emit=mlir | FileCheck %s
// RUN: kilnc %samples/mlp.mlir --inference --function loss -o %t.kiln
// CHECK: func.func @forward
// CHECK-SAME: -> (tensor<f32> {kiln.name = "result0", kiln.role = "output"})
