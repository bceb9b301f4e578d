// Binary elementwise ops, compare and select: custom assembly round-trips,
// also through the generic form, and the generic form shows the inferred
// (broadcast) result types.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @arith
// CHECK-SAME: -> (tensor<4x3x8xf32>, tensor<2x5x6xi32>, tensor<7x3xbf16>, tensor<9x1xf16>)
// CHECK: kiln.add %arg0, %arg1 : tensor<4x1x8xf32>, tensor<3x1xf32>
// CHECK: kiln.sub %arg0, %arg1 : tensor<4x1x8xf32>, tensor<3x1xf32>
// CHECK: kiln.mul %arg2, %arg3 : tensor<2x5x1xi32>, tensor<6xi32>
// CHECK: kiln.div %arg3, %arg2 : tensor<6xi32>, tensor<2x5x1xi32>
// CHECK: kiln.max %arg4, %arg5 : tensor<7x3xbf16>, tensor<bf16>
// CHECK: kiln.min %arg5, %arg4 : tensor<bf16>, tensor<7x3xbf16>
// CHECK: kiln.pow %arg6, %arg6 : tensor<9x1xf16>, tensor<9x1xf16>
// CHECK: kiln.add %arg2, %arg3 : tensor<2x5x1xi32>, tensor<6xi32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3x8xf32>, tensor<2x5x6xi32>, tensor<7x3xbf16>, tensor<9x1xf16>
// GENERIC-LABEL: sym_name = "arith"
// GENERIC: "kiln.add"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<4x1x8xf32>, tensor<3x1xf32>) -> tensor<4x3x8xf32>
// GENERIC: "kiln.sub"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<4x1x8xf32>, tensor<3x1xf32>) -> tensor<4x3x8xf32>
// GENERIC: "kiln.mul"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<2x5x1xi32>, tensor<6xi32>) -> tensor<2x5x6xi32>
// GENERIC: "kiln.div"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<6xi32>, tensor<2x5x1xi32>) -> tensor<2x5x6xi32>
// GENERIC: "kiln.max"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<7x3xbf16>, tensor<bf16>) -> tensor<7x3xbf16>
// GENERIC: "kiln.min"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<bf16>, tensor<7x3xbf16>) -> tensor<7x3xbf16>
// GENERIC: "kiln.pow"(%{{[^,)]+}}, %{{[^,)]+}}) : (tensor<9x1xf16>, tensor<9x1xf16>) -> tensor<9x1xf16>
func.func @arith(%a: tensor<4x1x8xf32>, %b: tensor<3x1xf32>, %i: tensor<2x5x1xi32>, %j: tensor<6xi32>,
                 %h: tensor<7x3xbf16>, %s: tensor<bf16>, %p: tensor<9x1xf16>)
    -> (tensor<4x3x8xf32>, tensor<2x5x6xi32>, tensor<7x3xbf16>, tensor<9x1xf16>) {
  %0 = kiln.add %a, %b : tensor<4x1x8xf32>, tensor<3x1xf32>
  %1 = kiln.sub %a, %b : tensor<4x1x8xf32>, tensor<3x1xf32>
  %2 = kiln.mul %i, %j : tensor<2x5x1xi32>, tensor<6xi32>
  %3 = kiln.div %j, %i : tensor<6xi32>, tensor<2x5x1xi32>
  %4 = kiln.max %h, %s : tensor<7x3xbf16>, tensor<bf16>
  %5 = kiln.min %s, %h : tensor<bf16>, tensor<7x3xbf16>
  %6 = kiln.pow %p, %p : tensor<9x1xf16>, tensor<9x1xf16>
  %7 = kiln.add %i, %j : tensor<2x5x1xi32>, tensor<6xi32>
  return %1, %3, %5, %6 : tensor<4x3x8xf32>, tensor<2x5x6xi32>, tensor<7x3xbf16>, tensor<9x1xf16>
}

// CHECK-LABEL: func.func @compare
// CHECK: kiln.compare lt, %arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>
// CHECK: kiln.compare eq, %arg2, %arg3 : tensor<3x1x5xi32>, tensor<6x1xi32>
// CHECK: kiln.compare ne, %arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>
// CHECK: kiln.compare le, %arg1, %arg0 : tensor<8xf32>, tensor<4x8xf32>
// CHECK: kiln.compare gt, %arg4, %arg4 : tensor<2x2xbf16>, tensor<2x2xbf16>
// CHECK: kiln.compare ge, %arg2, %arg3 : tensor<3x1x5xi32>, tensor<6x1xi32>
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x8xi1>, tensor<3x6x5xi1>
// GENERIC-LABEL: sym_name = "compare"
// GENERIC: "kiln.compare"(%{{[^,)]+}}, %{{[^,)]+}}) <{predicate = #kiln<cmp lt>}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
// GENERIC: "kiln.compare"(%{{[^,)]+}}, %{{[^,)]+}}) <{predicate = #kiln<cmp eq>}> : (tensor<3x1x5xi32>, tensor<6x1xi32>) -> tensor<3x6x5xi1>
func.func @compare(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %i: tensor<3x1x5xi32>, %j: tensor<6x1xi32>,
                   %h: tensor<2x2xbf16>) -> (tensor<4x8xi1>, tensor<3x6x5xi1>) {
  %0 = kiln.compare lt, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.compare eq, %i, %j : tensor<3x1x5xi32>, tensor<6x1xi32>
  %2 = kiln.compare ne, %a, %b : tensor<4x8xf32>, tensor<8xf32>
  %3 = kiln.compare le, %b, %a : tensor<8xf32>, tensor<4x8xf32>
  %4 = kiln.compare gt, %h, %h : tensor<2x2xbf16>, tensor<2x2xbf16>
  %5 = kiln.compare ge, %i, %j : tensor<3x1x5xi32>, tensor<6x1xi32>
  return %0, %1 : tensor<4x8xi1>, tensor<3x6x5xi1>
}

// CHECK-LABEL: func.func @select
// CHECK: kiln.select %arg0, %arg1, %arg2 : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
// CHECK: kiln.select %arg3, %arg1, %arg2 : tensor<2x1x1xi1>, tensor<4x8xf32>, tensor<8xf32>
// CHECK: kiln.select %arg4, %arg5, %arg5 : tensor<i1>, tensor<3x1xi1>, tensor<3x1xi1>
// CHECK: kiln.select %arg0, %arg6, %arg7 : tensor<4x8xi1>, tensor<1xi32>, tensor<4x1xi32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<3x1xi1>, tensor<4x8xi32>
// GENERIC-LABEL: sym_name = "select"
// GENERIC: "kiln.select"(%{{[^,)]+}}, %{{[^,)]+}}, %{{[^,)]+}}) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// GENERIC: "kiln.select"(%{{[^,)]+}}, %{{[^,)]+}}, %{{[^,)]+}}) : (tensor<2x1x1xi1>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// GENERIC: "kiln.select"(%{{[^,)]+}}, %{{[^,)]+}}, %{{[^,)]+}}) : (tensor<i1>, tensor<3x1xi1>, tensor<3x1xi1>) -> tensor<3x1xi1>
// GENERIC: "kiln.select"(%{{[^,)]+}}, %{{[^,)]+}}, %{{[^,)]+}}) : (tensor<4x8xi1>, tensor<1xi32>, tensor<4x1xi32>) -> tensor<4x8xi32>
func.func @select(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<8xf32>, %d: tensor<2x1x1xi1>,
                  %s: tensor<i1>, %m: tensor<3x1xi1>, %i: tensor<1xi32>, %j: tensor<4x1xi32>)
    -> (tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<3x1xi1>, tensor<4x8xi32>) {
  %0 = kiln.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>, tensor<8xf32>
  %1 = kiln.select %d, %a, %b : tensor<2x1x1xi1>, tensor<4x8xf32>, tensor<8xf32>
  %2 = kiln.select %s, %m, %m : tensor<i1>, tensor<3x1xi1>, tensor<3x1xi1>
  %3 = kiln.select %c, %i, %j : tensor<4x8xi1>, tensor<1xi32>, tensor<4x1xi32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<3x1xi1>, tensor<4x8xi32>
}
