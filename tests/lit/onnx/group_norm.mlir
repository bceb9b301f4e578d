// nn.GroupNorm as PyTorch exports it (an instance norm of [N, G, -1]
// between reshapes, a Mul and an Add per channel) imports as one
// kiln.group_norm of the input with the weight and bias; an instance norm's
// own per-group scale other than 1 is folded into the weight and bias; a
// plain InstanceNormalization is a group norm with a group per channel.
// RUN: python3 %S/Inputs/make_onnx_model.py group_norm_pattern %t.gn.onnx
// RUN: kiln-opt %t.gn.onnx --trainable=all | FileCheck %s --check-prefix=PATTERN
// PATTERN: func.func @loss(%[[W:arg[0-9]+]]: tensor<8xf32> {kiln.name = "weight", kiln.param
// PATTERN-SAME: %[[B:arg[0-9]+]]: tensor<8xf32> {kiln.name = "bias", kiln.param
// PATTERN-SAME: %[[X:arg[0-9]+]]: tensor<2x8x3x5xf32> {kiln.name = "x"}
// PATTERN-NOT: kiln.reshape
// PATTERN-NOT: kiln.mul
// PATTERN: kiln.group_norm %[[X]], %[[W]], %[[B]] groups = 4 eps = {{.*}} : tensor<2x8x3x5xf32>, tensor<8xf32>, tensor<8xf32>
// PATTERN-NOT: kiln.add
// PATTERN: return

// RUN: python3 %S/Inputs/make_onnx_model.py group_norm_pattern_scaled %t.scaled.onnx
// RUN: kiln-opt %t.scaled.onnx --trainable=all | FileCheck %s --check-prefix=SCALED
// SCALED: %[[S:.*]] = kiln.mul %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>
// SCALED: kiln.group_norm %{{.*}}, %[[S]], %{{.*}} groups = 4

// RUN: python3 %S/Inputs/make_onnx_model.py instance_norm %t.in.onnx
// RUN: kiln-opt %t.in.onnx --trainable=all | FileCheck %s --check-prefix=INSTANCE
// INSTANCE: kiln.group_norm %{{.*}}, %{{.*}}, %{{.*}} groups = 3 eps = 0.0010000000474974513 : tensor<2x3x7xf32>, tensor<3xf32>, tensor<3xf32>

// The whole graph compiles for inference and both training modes.
// RUN: kilnc %t.gn.onnx --trainable=all --inference -o %t.inference.kiln
// RUN: kilnc %t.gn.onnx --trainable=all --loss=mse --target=t --train=sgd -o %t.sgd.kiln
// RUN: kilnc %t.gn.onnx --trainable=all --loss=mse --target=t --train=adamw --precision=bf16 -o %t.bf16.kiln

// GroupNormalization: version 18's scale and bias per group are spread over
// each group's channels; version 21's are per channel already.
// RUN: python3 %S/Inputs/make_onnx_model.py group_norm_18 %t.18.onnx
// RUN: kiln-opt %t.18.onnx --trainable=all | FileCheck %s --check-prefix=V18
// V18: func.func @loss(%[[S:arg[0-9]+]]: tensor<3xf32> {kiln.name = "s"
// V18-SAME: %[[B:arg[0-9]+]]: tensor<3xf32> {kiln.name = "b"
// V18-SAME: %[[X:arg[0-9]+]]: tensor<2x6x3x3xf32> {kiln.name = "x"}
// V18: %[[S3:.*]] = kiln.reshape %[[S]] : tensor<3xf32> -> tensor<3x1xf32>
// V18: %[[S2:.*]] = kiln.broadcast_to %[[S3]] : tensor<3x1xf32> -> tensor<3x2xf32>
// V18: %[[SC:.*]] = kiln.reshape %[[S2]] : tensor<3x2xf32> -> tensor<6xf32>
// V18: %[[BC:.*]] = kiln.reshape %{{.*}} : tensor<3x2xf32> -> tensor<6xf32>
// V18: kiln.group_norm %[[X]], %[[SC]], %[[BC]] groups = 3 eps = 0.0010000000474974513 : tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<6xf32>
// RUN: python3 %S/Inputs/make_onnx_model.py group_norm_21 %t.21.onnx
// RUN: kiln-opt %t.21.onnx --trainable=all | FileCheck %s --check-prefix=V21
// V21: func.func @loss(%[[S:arg[0-9]+]]: tensor<6xf32> {kiln.name = "s"
// V21-SAME: %[[B:arg[0-9]+]]: tensor<6xf32> {kiln.name = "b"
// V21-SAME: %[[X:arg[0-9]+]]: tensor<2x6x3x3xf32> {kiln.name = "x"}
// V21-NEXT: kiln.group_norm %[[X]], %[[S]], %[[B]] groups = 3 eps = 0.0010000000474974513 : tensor<2x6x3x3xf32>, tensor<6xf32>, tensor<6xf32>
