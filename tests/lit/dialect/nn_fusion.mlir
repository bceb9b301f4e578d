// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @pointwise
// CHECK: %[[R:.*]] = kiln.fusion "pointwise" (%{{.*}}, %{{.*}}) : (tensor<4x1x8xf32>, tensor<3x1xf32>) -> tensor<4x3x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x1x8xf32>, %[[Y:.*]]: tensor<3x1xf32>):
// CHECK-NEXT:   %[[S:.*]] = kiln.add %[[X]], %[[Y]] : tensor<4x1x8xf32>, tensor<3x1xf32>
// CHECK-NEXT:   %[[E:.*]] = kiln.exp %[[S]] : tensor<4x3x8xf32>
// CHECK-NEXT:   kiln.yield %[[E]] : tensor<4x3x8xf32>
// CHECK-NEXT: }
// CHECK: return %[[R]] : tensor<4x3x8xf32>
func.func @pointwise(%a: tensor<4x1x8xf32>, %b: tensor<3x1xf32>) -> tensor<4x3x8xf32> {
  %r = kiln.fusion "pointwise" (%a, %b) : (tensor<4x1x8xf32>, tensor<3x1xf32>) -> tensor<4x3x8xf32> {
  ^bb0(%x: tensor<4x1x8xf32>, %y: tensor<3x1xf32>):
    %s = kiln.add %x, %y : tensor<4x1x8xf32>, tensor<3x1xf32>
    %e = kiln.exp %s : tensor<4x3x8xf32>
    kiln.yield %e : tensor<4x3x8xf32>
  }
  return %r : tensor<4x3x8xf32>
}

// Several results, an attribute for the code generator, a softmax reduction.
// CHECK-LABEL: func.func @reduction
// CHECK: %[[R:.*]]:2 = kiln.fusion "reduction" (%{{.*}}) {kiln.tile = 128 : i64} : (tensor<6x10xbf16>) -> (tensor<6x10xbf16>, tensor<10xbf16>) {
// CHECK: kiln.yield %{{.*}}, %{{.*}} : tensor<6x10xbf16>, tensor<10xbf16>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<6x10xbf16>, tensor<10xbf16>
func.func @reduction(%a: tensor<6x10xbf16>) -> (tensor<6x10xbf16>, tensor<10xbf16>) {
  %r:2 = kiln.fusion "reduction" (%a) {kiln.tile = 128} : (tensor<6x10xbf16>) -> (tensor<6x10xbf16>, tensor<10xbf16>) {
  ^bb0(%x: tensor<6x10xbf16>):
    %s = kiln.softmax %x dim = 1 : tensor<6x10xbf16>
    %t = kiln.reduce_sum %s dims = [0] : tensor<6x10xbf16>
    kiln.yield %s, %t : tensor<6x10xbf16>, tensor<10xbf16>
  }
  return %r#0, %r#1 : tensor<6x10xbf16>, tensor<10xbf16>
}

// No inputs (a constant-like kernel is still a fusion of its own).
// CHECK-LABEL: func.func @no_inputs
// CHECK: kiln.fusion "optimizer" () : () -> () {
// CHECK-NEXT: kiln.yield
// CHECK-NEXT: }
func.func @no_inputs() {
  kiln.fusion "optimizer" () : () -> () {
    kiln.yield
  }
  return
}
