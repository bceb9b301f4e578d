// kiln-ref runs a function, writes its results to safetensors by name, and
// reads them back: every dtype survives the round trip.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function make -o %t.in.safetensors --print \
// RUN:   | FileCheck %s --check-prefix=MAKE
// RUN: kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.in.safetensors \
// RUN:   -o %t.out.safetensors --print | FileCheck %s --check-prefix=USE
// RUN: kiln-ref %S/Inputs/funcs.mlir --function reread --inputs %t.out.safetensors \
// RUN:   --print | FileCheck %s --check-prefix=REREAD
// The f64 oracle gives the same answers here (every value is exact).
// RUN: kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.in.safetensors \
// RUN:   --precision f64 --print | FileCheck %s --check-prefix=USE

// MAKE:      x: tensor<2x3xf32> = [1, 2, 3, 4, 5, 6]
// MAKE-NEXT: y: tensor<3xf32> = [0.5, -1, 0.25]
// MAKE-NEXT: idx: tensor<4xi32> = [3, 0, 2, 1]
// MAKE-NEXT: h: tensor<2xbf16> = [1.5, -0.375]
// MAKE-NEXT: m: tensor<3xi1> = [1, 0, 1]

// USE:      sum: tensor<2x3xf32> = [1.5, 1, 3.25, 4.5, 4, 6.25]
// USE-NEXT: result1: tensor<2xbf16> = [3, -0.75]
// USE-NEXT: result2: tensor<4xi32> = [3, 0, 2, 1]
// USE-NEXT: result3: tensor<3xi1> = [1, 0, 1]

// REREAD:      sum: tensor<2x3xf32> = [1.5, 1, 3.25, 4.5, 4, 6.25]
// REREAD-NEXT: doubled: tensor<2xbf16> = [3, -0.75]
