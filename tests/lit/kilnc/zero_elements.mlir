// A model with zero-element tensors compiles: an empty constant becomes a
// one-element table that no index reads, and its kernel's grid still has
// one block (its grid-stride loop runs no element).
// RUN: kilnc %s --inference --function f --emit=cuda | FileCheck %s
// RUN: kilnc %s --inference --function f -o %t.kiln
// So does a batch norm over zero channels, for inference and for training.
// RUN: kilnc %S/Inputs/zero_channels.mlir --inference --emit=cuda -o %t.bn.cu
// RUN: kilnc %S/Inputs/zero_channels.mlir --precision=bf16 --emit=cuda -o %t.bn_train.cu

// CHECK: static __device__ const int {{.*}}const_{{[0-9]+}}[1] = {0
// CHECK-NEXT: };
// CHECK: extern "C" __global__ void
func.func @f(%x: tensor<3x0x5xi32>) -> tensor<3x0x5xi32> {
  %c = kiln.constant dense<> : tensor<3x0x5xi32>
  %y = kiln.add %x, %c : tensor<3x0x5xi32>, tensor<3x0x5xi32>
  return %y : tensor<3x0x5xi32>
}
