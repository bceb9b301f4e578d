// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @group_norm
// CHECK: %[[Y:.*]] = kiln.group_norm %{{.*}}, %{{.*}}, %{{.*}} groups = 4 eps = 9.9999999999999995E-7 : tensor<2x8x5x6xf32>, tensor<8xf32>, tensor<8xf32>
// CHECK: kiln.group_norm %{{.*}} groups = 8 : tensor<2x8x5x6xf32>
// CHECK: kiln.group_norm_backward %[[Y]], %{{.*}}, %{{.*}} groups = 4 : tensor<2x8x5x6xf32>, tensor<8xf32>
// CHECK: kiln.group_norm %{{.*}}, %{{.*}} groups = 2 dim = 3 eps = 1.000000e-03 : tensor<2x5x6x8xf32>, tensor<8xf32>
// CHECK: %{{.*}}, %[[DW:.*]], %{{.*}} = kiln.group_norm_backward %{{.*}}, %{{.*}} groups = 2 dim = 3 : tensor<2x5x6x8xf32>
func.func @group_norm(%x: tensor<2x8x5x6xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>)
    -> (tensor<2x8x5x6xf32>, tensor<2x8x5x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.group_norm %x, %w, %b groups = 4 eps = 1.0e-06
      : tensor<2x8x5x6xf32>, tensor<8xf32>, tensor<8xf32>
  %1 = kiln.group_norm %x groups = 8 : tensor<2x8x5x6xf32>
  %dx, %dw, %db = kiln.group_norm_backward %0, %1, %w groups = 4
      : tensor<2x8x5x6xf32>, tensor<8xf32>
  %xl = kiln.transpose %x perm = [0, 2, 3, 1] : tensor<2x8x5x6xf32>
  %2 = kiln.group_norm %xl, %w groups = 2 dim = 3 eps = 1.0e-03
      : tensor<2x5x6x8xf32>, tensor<8xf32>
  %dxl, %dwl, %dbl = kiln.group_norm_backward %2, %xl groups = 2 dim = 3
      : tensor<2x5x6x8xf32>
  return %0, %dx, %dw, %db, %dwl
      : tensor<2x8x5x6xf32>, tensor<2x8x5x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
