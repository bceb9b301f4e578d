// Constants, iota and random numbers: custom assembly round-trips, also
// through the generic form.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @constants
// CHECK: kiln.constant dense<[1.000000e+00, 2.000000e+00, -3.500000e+00]> : tensor<3xf32>
// CHECK: kiln.constant dense<5.000000e-01> : tensor<2x7x5xbf16>
// CHECK: kiln.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
// CHECK: kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK: kiln.constant dense<0.000000e+00> : tensor<f16>
// GENERIC-LABEL: sym_name = "constants"
// GENERIC: "kiln.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, -3.500000e+00]> : tensor<3xf32>}> : () -> tensor<3xf32>
func.func @constants() -> (tensor<3xf32>, tensor<2x7x5xbf16>, tensor<3x2xi32>, tensor<3xi1>, tensor<f16>) {
  %0 = kiln.constant dense<[1.0, 2.0, -3.5]> : tensor<3xf32>
  %1 = kiln.constant dense<0.5> : tensor<2x7x5xbf16>
  %2 = kiln.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi32>
  %3 = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %4 = kiln.constant dense<0.0> : tensor<f16>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2x7x5xbf16>, tensor<3x2xi32>, tensor<3xi1>, tensor<f16>
}

// CHECK-LABEL: func.func @iota
// CHECK: kiln.iota dim = 1 : tensor<4x8xi32>
// CHECK: kiln.iota dim = 0 : tensor<9xf32>
// CHECK: kiln.iota dim = 2 : tensor<2x3x5xbf16>
// GENERIC-LABEL: sym_name = "iota"
// GENERIC: "kiln.iota"() <{dim = 1 : i64}> : () -> tensor<4x8xi32>
func.func @iota() -> (tensor<4x8xi32>, tensor<9xf32>, tensor<2x3x5xbf16>) {
  %0 = kiln.iota dim = 1 : tensor<4x8xi32>
  %1 = kiln.iota dim = 0 : tensor<9xf32>
  %2 = kiln.iota dim = 2 : tensor<2x3x5xbf16>
  return %0, %1, %2 : tensor<4x8xi32>, tensor<9xf32>, tensor<2x3x5xbf16>
}

// Defaults (low = 0, high = 1, mean = 0, std = 1) are left out when printing.
// CHECK-LABEL: func.func @random
// CHECK-SAME: (%[[STEP:[^:]*]]: tensor<i32>)
// CHECK: kiln.random_uniform seed = 42 stream = 3 offset = %[[STEP]] low = -1.000000e+00 high = 2.500000e+00 : tensor<4x8xf32>
// CHECK: kiln.random_uniform seed = -7 stream = 4294967295 : tensor<3x1x5xbf16>
// CHECK: kiln.random_uniform seed = 1 stream = 0 high = 6.000000e+00 : tensor<7xf16>
// CHECK: kiln.random_normal seed = 42 stream = 0 offset = %[[STEP]] mean = 1.000000e+00 std = 2.000000e-02 : tensor<64x3xf32>
// CHECK: kiln.random_normal seed = 9 stream = 12 : tensor<2x2x2xbf16>
// CHECK: kiln.random_normal seed = 9 stream = 12 std = 0.000000e+00 : tensor<5xf16>
// GENERIC-LABEL: sym_name = "random"
// GENERIC: "kiln.random_uniform"(%{{.*}}) <{high = 2.500000e+00 : f64, low = -1.000000e+00 : f64, seed = 42 : i64, stream = 3 : i64}> : (tensor<i32>) -> tensor<4x8xf32>
// GENERIC: "kiln.random_uniform"() <{high = 1.000000e+00 : f64, low = 0.000000e+00 : f64, seed = -7 : i64, stream = 4294967295 : i64}> : () -> tensor<3x1x5xbf16>
// GENERIC: "kiln.random_normal"(%{{.*}}) <{mean = 1.000000e+00 : f64, seed = 42 : i64, std = 2.000000e-02 : f64, stream = 0 : i64}> : (tensor<i32>) -> tensor<64x3xf32>
func.func @random(%step: tensor<i32>) -> (tensor<4x8xf32>, tensor<3x1x5xbf16>, tensor<7xf16>, tensor<64x3xf32>, tensor<2x2x2xbf16>, tensor<5xf16>) {
  %0 = kiln.random_uniform seed = 42 stream = 3 offset = %step low = -1.0 high = 2.5 : tensor<4x8xf32>
  %1 = kiln.random_uniform seed = -7 stream = 4294967295 : tensor<3x1x5xbf16>
  %2 = kiln.random_uniform seed = 1 stream = 0 low = 0.0 high = 6.0 : tensor<7xf16>
  %3 = kiln.random_normal seed = 42 stream = 0 offset = %step mean = 1.0 std = 0.02 : tensor<64x3xf32>
  %4 = kiln.random_normal seed = 9 stream = 12 mean = 0.0 std = 1.0 : tensor<2x2x2xbf16>
  %5 = kiln.random_normal seed = 9 stream = 12 std = 0.0 : tensor<5xf16>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<3x1x5xbf16>, tensor<7xf16>, tensor<64x3xf32>, tensor<2x2x2xbf16>, tensor<5xf16>
}
