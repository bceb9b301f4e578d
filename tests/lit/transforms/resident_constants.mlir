// RUN: kiln-opt %s --kiln-resident-constants | FileCheck %s
// RUN: kiln-opt %s --kiln-resident-constants=max-inline-elements=100 | FileCheck %s --check-prefix=LIMIT

// Constants of more than 16 elements that are not all equal become
// arguments of role constant carrying their values; the name comes from the
// constant's kiln.name (an ONNX initializer's), else constant.<k>, never one
// the module uses. Splats, small tables and a returned constant stay.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %arg0: tensor<4x5xf32> {kiln.name = "x", kiln.role = "input"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x5xf32> {kiln.name = "fc.weight", kiln.role = "constant", kiln.value = dense<{{\[\[}}1.000000e+00, 2.000000e+00
// CHECK-SAME: %[[T:[a-z0-9]+]]: tensor<17xi32> {kiln.name = "constant.1", kiln.role = "constant", kiln.value = dense<[0, 1, 2,
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<20xi1> {kiln.name = "constant.2", kiln.role = "constant", kiln.value = dense<[true, false,
// CHECK-NOT: kiln.value
// CHECK: kiln.constant dense<5.000000e-01> : tensor<4x5xf32>
// CHECK: kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: kiln.add %arg0, %[[W]]
// CHECK: kiln.embedding {{.*}}%[[T]]
// CHECK: kiln.select %[[M]]
// CHECK: %[[R:.*]] = kiln.constant dense<{{\[}}5.000000e+00, 6.000000e+00
// CHECK: return {{.*}}%[[R]]

// The same values under the same name are the same buffer in every function.
// CHECK-LABEL: func.func @other(
// CHECK-SAME: %arg1: tensor<4x5xf32> {kiln.name = "fc.weight.0", kiln.role = "constant", kiln.value = dense<{{\[\[}}9.000000e+00
// CHECK-SAME: %arg2: tensor<4x5xf32> {kiln.name = "fc.weight", kiln.role = "constant", kiln.value = dense<{{\[\[}}1.000000e+00, 2.000000e+00
// CHECK: kiln.add %arg0, %arg1
// CHECK: kiln.add {{.*}}, %arg2

// LIMIT-LABEL: func.func @forward(
// LIMIT-NOT: kiln.value
// LIMIT: return

module {
  func.func @forward(%x: tensor<4x5xf32> {kiln.name = "x", kiln.role = "input"},
                     %table: tensor<40x3xf32> {kiln.name = "constant.0", kiln.role = "input"})
      -> (tensor<4x5xf32> {kiln.name = "y"}, tensor<17x3xf32> {kiln.name = "rows"},
          tensor<20xf32> {kiln.name = "picked"}, tensor<3xf32> {kiln.name = "small"},
          tensor<20xf32> {kiln.name = "returned"}) {
    %w = kiln.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0],
                              [11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0]]>
        : tensor<4x5xf32> {kiln.name = "fc.weight"}
    %half = kiln.constant dense<0.5> : tensor<4x5xf32>
    %small = kiln.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %a = kiln.add %x, %w : tensor<4x5xf32>, tensor<4x5xf32>
    %y = kiln.mul %a, %half : tensor<4x5xf32>, tensor<4x5xf32>
    %ids = kiln.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : tensor<17xi32>
    %rows = kiln.embedding %table, %ids : tensor<40x3xf32>, tensor<17xi32>
    %mask = kiln.constant dense<[true, false, true, false, true, false, true, false, true, false,
                                 true, false, true, false, true, false, true, false, true, true]> : tensor<20xi1>
    %flat = kiln.reshape %y : tensor<4x5xf32> -> tensor<20xf32>
    %zero = kiln.constant dense<0.0> : tensor<20xf32>
    %picked = kiln.select %mask, %flat, %zero : tensor<20xi1>, tensor<20xf32>, tensor<20xf32>
    %ret = kiln.constant dense<[5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0,
                               15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0]> : tensor<20xf32>
    return %y, %rows, %picked, %small, %ret : tensor<4x5xf32>, tensor<17x3xf32>, tensor<20xf32>, tensor<3xf32>, tensor<20xf32>
  }

  func.func @other(%x: tensor<4x5xf32> {kiln.name = "x2"}) -> tensor<4x5xf32> {
    %v = kiln.constant dense<[[9.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0],
                              [11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0]]>
        : tensor<4x5xf32> {kiln.name = "fc.weight"}
    %w = kiln.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0],
                              [11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0]]>
        : tensor<4x5xf32> {kiln.name = "fc.weight"}
    %a = kiln.add %x, %v : tensor<4x5xf32>, tensor<4x5xf32>
    %b = kiln.add %a, %w : tensor<4x5xf32>, tensor<4x5xf32>
    return %b : tensor<4x5xf32>
  }
}
