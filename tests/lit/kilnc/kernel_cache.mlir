// Compiled kernels are kept in the kernel cache: a second compilation of the
// same model finds them there and writes the same artifact.
// RUN: rm -rf %t.cache
// RUN: kilnc %s --inference --function f -o %t.first.kiln --kernel-cache=%t.cache --stats 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: kilnc %s --inference --function f -o %t.second.kiln --kernel-cache=%t.cache --stats 2>&1 | FileCheck %s --check-prefix=SECOND
// RUN: cmp %t.first.kiln %t.second.kiln
// RUN: ls %t.cache | FileCheck %s --check-prefix=FILES
// RUN: env KILN_KERNEL_CACHE=%t.cache kilnc %s --inference --function f -o %t.third.kiln --no-kernel-cache --stats 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: env KILN_KERNEL_CACHE=%t.cache kilnc %s --inference --function f -o %t.fourth.kiln --stats 2>&1 | FileCheck %s --check-prefix=SECOND

// FIRST: kernels: 1 distinct (1 compiled, 0 from the kernel cache;
// SECOND: kernels: 1 distinct (0 compiled, 1 from the kernel cache;
// FILES-COUNT-1: {{^[0-9a-f]{64}\.kernel$}}
// OFF: kernels: 1 distinct (1 compiled, 0 from the kernel cache;
func.func @f(%a: tensor<4x8xf32> {kiln.name = "a"}, %b: tensor<8xf32> {kiln.name = "b"})
    -> (tensor<4x8xf32> {kiln.name = "y"}, tensor<f32> {kiln.name = "s"}) {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.tanh %0 : tensor<4x8xf32>
  %2 = kiln.reduce_sum %1 dims = [0, 1] : tensor<4x8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<f32>
}
