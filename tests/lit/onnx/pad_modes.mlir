// Pad in modes reflect, edge and wrap: one axis at a time, the input
// concatenated with slices of itself (reflect: the slices beside the
// border, flipped; edge: the border slice, broadcast).
// RUN: python3 %S/Inputs/make_onnx_model.py pad_reflect %t.reflect.onnx
// RUN: kiln-opt %t.reflect.onnx | FileCheck %s --check-prefix=REFLECT
// REFLECT: func.func @loss(%[[X:.*]]: tensor<2x3x4x5xf32> {kiln.name = "x"})
// REFLECT-NEXT: %[[L:.*]] = kiln.slice %[[X]] start = [0, 0, 1, 0] limit = [2, 3, 2, 5] step = [1, 1, 1, 1]
// REFLECT-NEXT: %[[LF:.*]] = kiln.flip %[[L]] dims = [2] : tensor<2x3x1x5xf32>
// REFLECT-NEXT: %[[H:.*]] = kiln.slice %[[X]] start = [0, 0, 0, 0] limit = [2, 3, 3, 5] step = [1, 1, 1, 1]
// REFLECT-NEXT: %[[HF:.*]] = kiln.flip %[[H]] dims = [2] : tensor<2x3x3x5xf32>
// REFLECT-NEXT: %[[Y:.*]] = kiln.concat %[[LF]], %[[X]], %[[HF]] dim = 2 : tensor<2x3x1x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x3x5xf32>
// REFLECT-NEXT: kiln.slice %[[Y]] start = [0, 0, 0, 1] limit = [2, 3, 8, 3]
// REFLECT: kiln.concat %{{.*}}, %[[Y]], %{{.*}} dim = 3 : tensor<2x3x8x2xf32>, tensor<2x3x8x5xf32>, tensor<2x3x8x1xf32>

// Version 2's pads attribute; edge repeats the border.
// RUN: python3 %S/Inputs/make_onnx_model.py pad_edge_opset2 %t.edge.onnx
// RUN: kiln-opt %t.edge.onnx | FileCheck %s --check-prefix=EDGE
// EDGE: %[[B:.*]] = kiln.slice %{{.*}} start = [0, 0, 0, 0] limit = [2, 1, 4, 5]
// EDGE-NEXT: %[[C:.*]] = kiln.concat %[[B]], %{{.*}} dim = 1 : tensor<2x1x4x5xf32>, tensor<2x3x4x5xf32>
// EDGE-NEXT: %[[L:.*]] = kiln.slice %[[C]] start = [0, 0, 0, 0] limit = [2, 4, 4, 1]
// EDGE-NEXT: %[[LB:.*]] = kiln.broadcast_to %[[L]] : tensor<2x4x4x1xf32> -> tensor<2x4x4x2xf32>
// EDGE-NEXT: %[[H:.*]] = kiln.slice %[[C]] start = [0, 0, 0, 4] limit = [2, 4, 4, 5]
// EDGE-NEXT: %[[HB:.*]] = kiln.broadcast_to %[[H]] : tensor<2x4x4x1xf32> -> tensor<2x4x4x3xf32>
// EDGE-NEXT: kiln.concat %[[LB]], %[[C]], %[[HB]] dim = 3

// What kiln does not pad is an error naming the node: a reflection wider
// than the dim (size - 1 at most), a mode of a later version.
// RUN: python3 %S/Inputs/make_onnx_model.py pad_reflect_too_far %t.far.onnx
// RUN: not kiln-opt %t.far.onnx 2>&1 | FileCheck %s --check-prefix=FAR
// FAR: node 'pad0' (Pad): error: ONNX Pad-13 (opset 13): kiln does not support mode = 'reflect' padding dim 3 of 5 by 5 (at most size - 1 on each side)
// RUN: python3 %S/Inputs/make_onnx_model.py pad_wrap_18 %t.wrap.onnx
// RUN: not kiln-opt %t.wrap.onnx 2>&1 | FileCheck %s --check-prefix=WRAP
// WRAP: node 'pad0' (Pad): error: ONNX Pad-18 (opset 18): kiln does not support mode = 'wrap'

// The padded graphs compile for inference and both training modes (a
// parameter before the pad).
// RUN: python3 %S/Inputs/make_onnx_model.py pad_reflect_scaled %t.rs.onnx
// RUN: python3 %S/Inputs/make_onnx_model.py pad_edge_scaled %t.es.onnx
// RUN: kilnc %t.rs.onnx --trainable=all --inference -o %t.inference.kiln
// RUN: kilnc %t.rs.onnx --trainable=all --loss=mse --target=t --train=sgd -o %t.sgd.kiln
// RUN: kilnc %t.es.onnx --trainable=all --loss=mse --target=t --train=adamw --precision=bf16 -o %t.bf16.kiln
