// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// Result dim = ceil((limit - start) / step): 4/1 = 4, ceil(7/2) = 4, ceil(6/4) = 2.
// CHECK-LABEL: func.func @slice_strided
// CHECK: %[[S:.*]] = kiln.slice %{{.*}} start = [0, 2, 1] limit = [4, 9, 7] step = [1, 2, 4] : tensor<4x9x7xf32>
// CHECK: return %[[S]] : tensor<4x4x2xf32>
func.func @slice_strided(%x: tensor<4x9x7xf32>) -> tensor<4x4x2xf32> {
  %0 = kiln.slice %x start = [0, 2, 1] limit = [4, 9, 7] step = [1, 2, 4] : tensor<4x9x7xf32>
  return %0 : tensor<4x4x2xf32>
}

// An empty range gives a zero-sized dimension; start may equal the size.
// CHECK-LABEL: func.func @slice_empty_and_edges
// CHECK: kiln.slice %{{.*}} start = [5, 0] limit = [5, 3] step = [1, 3] : tensor<5x3xi1>
// CHECK: return %{{.*}} : tensor<0x1xi1>
func.func @slice_empty_and_edges(%m: tensor<5x3xi1>) -> tensor<0x1xi1> {
  %0 = kiln.slice %m start = [5, 0] limit = [5, 3] step = [1, 3] : tensor<5x3xi1>
  return %0 : tensor<0x1xi1>
}
