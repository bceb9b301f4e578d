// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// The default value 0.0 is not printed.
// CHECK-LABEL: func.func @pad_default_value
// CHECK: %[[P:.*]] = kiln.pad %{{.*}} low = [0, 1, 3] high = [2, 0, 1] : tensor<4x5x2xf32>
// CHECK: return %[[P]] : tensor<6x6x6xf32>
func.func @pad_default_value(%x: tensor<4x5x2xf32>) -> tensor<6x6x6xf32> {
  %0 = kiln.pad %x low = [0, 1, 3] high = [2, 0, 1] value = 0.0 : tensor<4x5x2xf32>
  return %0 : tensor<6x6x6xf32>
}

// CHECK-LABEL: func.func @pad_values
// CHECK: kiln.pad %{{.*}} low = [1] high = [0] value = -1.500000e+00 : tensor<7xbf16>
// CHECK: kiln.pad %{{.*}} low = [2, 0] high = [0, 3] value = -7.000000e+00 : tensor<3x3xi32>
// CHECK: kiln.pad %{{.*}} low = [1, 1] high = [1, 1] value = 1.000000e+00 : tensor<2x2xi1>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<8xbf16>, tensor<5x6xi32>, tensor<4x4xi1>
func.func @pad_values(%x: tensor<7xbf16>, %i: tensor<3x3xi32>, %m: tensor<2x2xi1>)
    -> (tensor<8xbf16>, tensor<5x6xi32>, tensor<4x4xi1>) {
  %0 = kiln.pad %x low = [1] high = [0] value = -1.5 : tensor<7xbf16>
  %1 = kiln.pad %i low = [2, 0] high = [0, 3] value = -7.0 : tensor<3x3xi32>
  %2 = kiln.pad %m low = [1, 1] high = [1, 1] value = 1.0 : tensor<2x2xi1>
  return %0, %1, %2 : tensor<8xbf16>, tensor<5x6xi32>, tensor<4x4xi1>
}
