// --random-seed draws the arguments: floats in [-1, 1), i32 in [0, 4) (or
// [0, --int-range)), i1 0 or 1; the same seed gives the same bytes.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function unnamed --random-seed 7 --print \
// RUN:   --print-count 6 -o %t.a.safetensors | FileCheck %s
// RUN: kiln-ref %S/Inputs/funcs.mlir --function unnamed --random-seed 7 -o %t.b.safetensors
// RUN: cmp %t.a.safetensors %t.b.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function unnamed --random-seed 8 -o %t.c.safetensors
// RUN: not cmp -s %t.a.safetensors %t.c.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function unnamed --random-seed 7 --int-range 1000 \
// RUN:   --print | FileCheck %s --check-prefix=RANGE

// CHECK:      result0: tensor<2x5xf32> = [{{-?[01]\.[0-9]+}}, {{-?[01]\.[0-9]+}}, {{-?[01]\.[0-9]+}}, {{-?[01]\.[0-9]+}}, {{-?[01]\.[0-9]+}}, {{-?[01]\.[0-9]+}}, ...]
// CHECK-NEXT: result1: tensor<6xi32> = [{{[0-3]}}, {{[0-3]}}, {{[0-3]}}, {{[0-3]}}, {{[0-3]}}, {{[0-3]}}]
// CHECK-NEXT: result2: tensor<4xi1> = [{{[01]}}, {{[01]}}, {{[01]}}, {{[01]}}]

// RANGE: result1: tensor<6xi32> = [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}]

// A file can give some arguments and the seed the rest.
// RUN: kiln-ref %S/Inputs/funcs.mlir --function make_x -o %t.x.safetensors
// RUN: kiln-ref %S/Inputs/funcs.mlir --function use --inputs %t.x.safetensors \
// RUN:   --random-seed 3 --print | FileCheck %s --check-prefix=MIXED
// MIXED: sum: tensor<2x3xf32> = [
// MIXED: result2: tensor<4xi32> = [{{[0-3]}}, {{[0-3]}}, {{[0-3]}}, {{[0-3]}}]
