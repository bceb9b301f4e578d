// ConvTranspose onto kiln.conv2d_backward_input (the input gradient of the
// Conv whose input has the ConvTranspose's output shape; the weights
// [C_in, C_out/group, k...] are that Conv's filter as they are), the bias
// added per channel; 1-D through a height of 1.
// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_2d %t.2d.onnx
// RUN: kiln-opt %t.2d.onnx --trainable=all | FileCheck %s --check-prefix=TWO
// TWO: func.func @loss(%[[W:arg[0-9]+]]: tensor<4x3x3x3xf32> {kiln.name = "w"
// TWO-SAME: %[[B:arg[0-9]+]]: tensor<3xf32> {kiln.name = "b"
// TWO-SAME: %[[X:arg[0-9]+]]: tensor<2x4x3x5xf32> {kiln.name = "x"}
// TWO-NEXT: %[[Y:.*]] = kiln.conv2d_backward_input %[[X]], %[[W]] layout = nchw stride = [2, 2] padding = [1, 0, 0, 1] : tensor<2x4x3x5xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x7x11xf32>
// TWO-NEXT: %[[B4:.*]] = kiln.reshape %[[B]] : tensor<3xf32> -> tensor<1x3x1x1xf32>
// TWO-NEXT: kiln.add %[[Y]], %[[B4]] : tensor<2x3x7x11xf32>, tensor<1x3x1x1xf32>

// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_groups %t.groups.onnx
// RUN: kiln-opt %t.groups.onnx --trainable=all | FileCheck %s --check-prefix=GROUPS
// GROUPS: kiln.conv2d_backward_input %{{.*}}, %{{.*}} layout = nchw dilation = [2, 2] groups = 2 : tensor<1x4x4x4xf32>, tensor<4x1x2x2xf32> -> tensor<1x2x6x6xf32>
// GROUPS-NOT: kiln.add

// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_1d %t.1d.onnx
// RUN: kiln-opt %t.1d.onnx --trainable=all | FileCheck %s --check-prefix=ONE
// ONE: kiln.reshape %{{.*}} : tensor<2x3x7xf32> -> tensor<2x3x1x7xf32>
// ONE: kiln.reshape %{{.*}} : tensor<3x2x4xf32> -> tensor<3x2x1x4xf32>
// ONE: kiln.conv2d_backward_input %{{.*}}, %{{.*}} layout = nchw stride = [1, 2] padding = [0, 0, 1, 0] : tensor<2x3x1x7xf32>, tensor<3x2x1x4xf32> -> tensor<2x2x1x15xf32>
// ONE: kiln.reshape %{{.*}} : tensor<2x2x1x15xf32> -> tensor<2x2x15xf32>

// What kiln cannot express exactly is an error naming the node.
// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_output_shape %t.shape.onnx
// RUN: not kiln-opt %t.shape.onnx 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: node 'up0' (ConvTranspose): error: ONNX ConvTranspose-11 (opset 17): kiln does not support output_shape on ConvTranspose (give pads and output_padding instead)
// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_same %t.same.onnx
// RUN: not kiln-opt %t.same.onnx 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: node 'up0' (ConvTranspose): error: {{.*}} kiln does not support auto_pad = 'SAME_UPPER' on ConvTranspose
// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_big_output_padding %t.op.onnx
// RUN: not kiln-opt %t.op.onnx 2>&1 | FileCheck %s --check-prefix=OUTPAD
// OUTPAD: node 'up0' (ConvTranspose): error: {{.*}} kiln does not support output_padding 2 outside [0, stride) on ConvTranspose
// RUN: python3 %S/Inputs/make_onnx_model.py conv_transpose_3d %t.3d.onnx
// RUN: not kiln-opt %t.3d.onnx 2>&1 | FileCheck %s --check-prefix=THREE
// THREE: node 'up0' (ConvTranspose): error: {{.*}} kiln does not support a 3-D ConvTranspose (1-D and 2-D only)

// The graph compiles for inference and both training modes (the weights'
// gradient: a conv2d_backward_filter of the output's gradient).
// RUN: kilnc %t.2d.onnx --trainable=all --inference -o %t.inference.kiln
// RUN: kilnc %t.2d.onnx --trainable=all --loss=mse --target=t --train=sgd -o %t.sgd.kiln
// RUN: kilnc %t.1d.onnx --trainable=all --loss=mse --target=t --train=adamw --precision=bf16 -o %t.bf16.kiln
// RUN: kiln-opt %t.2d.onnx --trainable=all --loss=mse --target=t --kiln-make-train-step="function=loss optimizer=sgd" | FileCheck %s --check-prefix=STEP
// STEP: kiln.conv2d_backward_filter %{{.*}}, %{{.*}} layout = nchw stride = [2, 2] padding = [1, 0, 0, 1] : tensor<2x4x3x5xf32>, tensor<2x3x7x11xf32> -> tensor<4x3x3x3xf32>
