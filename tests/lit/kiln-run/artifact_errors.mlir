// kiln-run reads and checks the artifact before it opens the CUDA driver: a
// missing or damaged file is reported as such on any machine, with or
// without a GPU, and exits 1.
// RUN: not kiln-run %t.missing.kiln 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: printf 'not an artifact' > %t.bad.kiln
// RUN: not kiln-run %t.bad.kiln 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: kilnc %s --inference --function f -o %t.good.kiln
// RUN: head -c 200 %t.good.kiln > %t.short.kiln
// RUN: not kiln-run %t.short.kiln 2>&1 | FileCheck %s --check-prefix=SHORT

// MISSING: kiln-run: {{.*}}missing.kiln
// MISSING-NOT: driver
// BAD: kiln-run: INVALID_ARGUMENT: {{.*}}
// BAD-NOT: driver
// SHORT: kiln-run: INVALID_ARGUMENT: {{.*}}
// SHORT-NOT: driver

func.func @f(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
  %y = kiln.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
