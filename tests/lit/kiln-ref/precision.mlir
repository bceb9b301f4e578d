// --precision f32 rounds every op's results to f32 as the GPU does; f64 keeps
// them exact in double, and the file holds those values rounded to f32.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function precision --print -o %t.32.safetensors \
// RUN:   | FileCheck %s --check-prefix=F32
// RUN: kiln-ref %S/Inputs/funcs.mlir --function precision --precision f64 --print \
// RUN:   -o %t.64.safetensors | FileCheck %s --check-prefix=F64
// RUN: kiln-ref %S/Inputs/funcs.mlir --function scalar --inputs %t.64.safetensors \
// RUN:   --print | FileCheck %s --check-prefix=READ
// F32: result0: tensor<f32> = [0]
// F64: result0: tensor<f32> = [1e-08]
// READ: result0: tensor<f32> = [1e-08]

// The samples run with their parameters from the initialisers.
// RUN: kiln-ref %samples/mlp.mlir --function loss --random-seed 1 --init-params --print \
// RUN:   -o %t.mlp.safetensors | FileCheck %s --check-prefix=MLP
// MLP: result0: tensor<f32> = [{{[0-9]+\.[0-9]+}}]
// RUN: kiln-ref %samples/sine_block.mlir --function loss --random-seed 2 --init-params \
// RUN:   --precision f64 --print | FileCheck %s --check-prefix=SINE
// SINE: result0: tensor<f32> = [{{[0-9]+\.[0-9]+}}]
