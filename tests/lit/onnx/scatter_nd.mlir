// ScatterND with indices known at compile time (what exporters write for
// slice assignment, as Swin's shifted-window mask) gathers the rows of its
// updates with kiln.embedding and selects them where the indices point;
// rows named twice apply in index order, one layer each. It compiles for
// inference and training (the updates are a parameter); the numbers are
// checked by ONNX's node tests (test_scatternd, _add, _multiply).
// RUN: python3 %S/Inputs/make_onnx_model.py scatter_nd %t.onnx
// RUN: kiln-opt %t.onnx --trainable=all | FileCheck %s
// CHECK: func.func @loss(%[[U:[a-z0-9]+]]: tensor<2x3xf32> {kiln.name = "u", kiln.param{{.*}}, %[[X:[a-z0-9]+]]: tensor<4x3xf32> {kiln.name = "x"})
// CHECK: %[[ROWS:.*]] = kiln.embedding %[[U]], %{{.*}} : tensor<2x3xf32>, tensor<4xi32>
// CHECK: kiln.select %{{.*}}, %[[ROWS]], %[[X]] : tensor<4x1xi1>, tensor<4x3xf32>, tensor<4x3xf32>
// CHECK-NOT: kiln.embedding
// RUN: kilnc %t.onnx --inference -o %t.inference.kiln
// RUN: kilnc %t.onnx --trainable=all --loss=mse --target=t --train=sgd -o %t.sgd.kiln
// RUN: python3 %S/Inputs/make_onnx_model.py scatter_nd_add %t.add.onnx
// RUN: kiln-opt %t.add.onnx --trainable=all | FileCheck %s --check-prefix=ADD
// ADD: kiln.embedding
// ADD: %[[FIRST:.*]] = kiln.add
// ADD: %[[ONE:.*]] = kiln.select %{{.*}}, %[[FIRST]], %{{.*}}
// ADD: kiln.embedding
// ADD: %[[SECOND:.*]] = kiln.add %[[ONE]],
// ADD: kiln.select %{{.*}}, %[[SECOND]], %[[ONE]]

// Indices computed at run time, and indices out of range, are errors at the node.
// RUN: python3 %S/Inputs/make_onnx_model.py scatter_nd_input %t.input.onnx
// RUN: not kiln-opt %t.input.onnx 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: node 'scatter0' (ScatterND): error: {{.*}}ScatterND's indices
// RUN: python3 %S/Inputs/make_onnx_model.py scatter_nd_range %t.range.onnx
// RUN: not kiln-opt %t.range.onnx 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: node 'scatter0' (ScatterND): error: ScatterND's index 4 is out of range for size 4 (dimension 0)
