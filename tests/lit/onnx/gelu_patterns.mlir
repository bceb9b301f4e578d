// GELU written out in element-wise ops (what exporters write below opset
// 20) imports as one kiln.gelu, in every order the exporters use; a near
// miss stays as written. The models are those of the opset node tests,
// which check their numbers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/../../onnx/opsets/make_node_tests.py %t > /dev/null
// RUN: kiln-opt %t/test_gelu_torchscript/model.onnx | FileCheck %s --check-prefix=EXACT
// RUN: kiln-opt %t/test_gelu_torchlib/model.onnx | FileCheck %s --check-prefix=EXACT
// RUN: kiln-opt %t/test_gelu_by_hand/model.onnx | FileCheck %s --check-prefix=EXACT
// EXACT: func.func @loss(%[[X:.*]]: tensor<3x5xf32> {kiln.name = "x"})
// EXACT-NEXT: %[[Y:.*]] = kiln.gelu %[[X]] : tensor<3x5xf32>
// EXACT-NEXT: return %[[Y]]
// RUN: kiln-opt %t/test_gelu_tanh_torchscript/model.onnx | FileCheck %s --check-prefix=TANH
// RUN: kiln-opt %t/test_gelu_tanh_pow/model.onnx | FileCheck %s --check-prefix=TANH
// TANH: func.func @loss(%[[X:.*]]: tensor<3x5xf32> {kiln.name = "x"})
// TANH-NEXT: %[[Y:.*]] = kiln.gelu %[[X]] approximate = tanh : tensor<3x5xf32>
// TANH-NEXT: return %[[Y]]
// RUN: kiln-opt %t/test_not_gelu/model.onnx | FileCheck %s --check-prefix=NOT
// NOT-NOT: kiln.gelu
// NOT: kiln.erf
// NOT-NOT: kiln.gelu

// The fused op carries the location of the outermost product's node.
// RUN: kiln-opt %t/test_gelu_torchscript/model.onnx --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// LOC: kiln.gelu {{.*}} loc(#[[L:loc[0-9]*]])
// LOC: #[[L]] = loc("node 4 (Mul)"
