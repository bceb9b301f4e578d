// --mlir-timing times each kiln pass of kilnc's pipeline.
// RUN: kilnc %s --emit=mlir -o %t.mlir --mlir-timing 2>&1 | FileCheck %s
// RUN: kilnc %s --emit=cuda --precision=bf16 --inference -o %t.cu --mlir-timing 2>&1 | FileCheck %s --check-prefix=CODEGEN

// CHECK: Execution time report
// CHECK: Parser
// CHECK-NEXT: KilnMakeTrainStep
// CHECK-NEXT: KilnResidentConstants
// CHECK-NEXT: KilnFuse
// CHECK-NEXT: KilnPlanMemory
// CHECK-NEXT: Output
// CHECK-NOT: KilnEmitCuda

// CODEGEN: Execution time report
// CODEGEN: Parser
// CODEGEN-NEXT: KilnMixedPrecision
// CODEGEN-NEXT: KilnMakeForward
// CODEGEN-NEXT: KilnResidentConstants
// CODEGEN-NEXT: KilnFuse
// CODEGEN-NEXT: KilnPlanMemory
// CODEGEN-NEXT: KilnSelectKernels
// CODEGEN-NEXT: KilnEmitCuda
// CODEGEN-NEXT: Output
func.func @loss(%w: tensor<8x16xf32> {kiln.param = #kiln.init<xavier>, kiln.name = "w"},
                %x: tensor<4x8xf32> {kiln.name = "x"},
                %y: tensor<4x16xf32> {kiln.name = "y"}) -> tensor<f32> {
  %0 = kiln.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32>
  %1 = kiln.tanh %0 : tensor<4x16xf32>
  %2 = kiln.mse_loss %1, %y reduction = mean : tensor<4x16xf32>
  return %2 : tensor<f32>
}
