// Training an imported ONNX model: initializers become kiln.param arguments
// (--trainable) that start from their values (kiln.value), and the loss is
// the graph's own (an MSE written as Sub/Mul/ReduceMean, a
// SoftmaxCrossEntropyLoss) or --loss/--target.
// RUN: python3 %S/Inputs/make_onnx_model.py mlp_mse %t.mse.onnx
// RUN: kiln-opt %t.mse.onnx --trainable=all | FileCheck %s --check-prefix=PARAMS
// PARAMS: func.func @loss(%{{.*}}: tensor<3x5xf32> {kiln.name = "w1", kiln.param = #kiln.init<xavier{{.*}}>, kiln.value = dense<{{.*}}> : tensor<3x5xf32>}, %{{.*}}: tensor<5xf32> {kiln.name = "b1", kiln.param = #kiln.init<zeros>, kiln.value = dense<{{.*}}> : tensor<5xf32>}
// PARAMS-SAME: {kiln.name = "x"}, %{{.*}}: tensor<4x2xf32> {kiln.name = "target"}) -> (tensor<f32> {kiln.name = "loss"})
// PARAMS: kiln.reduce_mean

// The training pipeline compiles it like a hand-written model.
// RUN: kilnc %t.mse.onnx --trainable=all --train=sgd --emit=mlir | FileCheck %s --check-prefix=STEP
// STEP: func.func @train_step({{.*}}kiln.name = "w1", kiln.role = "param"

// Only the named initializers train; the others stay constants.
// RUN: kiln-opt %t.mse.onnx --trainable=w2 | FileCheck %s --check-prefix=SOME
// SOME: func.func @loss(%{{.*}}: tensor<5x2xf32> {kiln.name = "w2", kiln.param = #kiln.init<xavier{{.*}}>, kiln.value = dense<{{.*}}> : tensor<5x2xf32>}, %{{.*}}: tensor<4x3xf32> {kiln.name = "x"}

// The weights file holds the ONNX values, which kiln-ref takes as inputs.
// RUN: kilnc %t.mse.onnx --trainable=all --emit=mlir --onnx-weights=%t.weights.safetensors -o %t.ir.mlir
// RUN: kiln-ref %t.mse.onnx --trainable=all --function loss --inputs %t.weights.safetensors --random-seed 1 --print | FileCheck %s --check-prefix=REF
// REF: loss: tensor<f32> = [{{[0-9]}}

// SoftmaxCrossEntropyLoss on logits [N, C] becomes kiln.cross_entropy.
// RUN: python3 %S/Inputs/make_onnx_model.py classifier_sce %t.sce.onnx
// RUN: kiln-opt %t.sce.onnx --trainable=all | FileCheck %s --check-prefix=SCE
// SCE: {kiln.name = "labels"}) -> (tensor<f32> {kiln.name = "loss"})
// SCE: kiln.cross_entropy {{.*}} : tensor<4x2xf32>, tensor<4xi32>

// --loss adds the loss and its target input.
// RUN: python3 %S/Inputs/make_onnx_model.py mlp %t.mlp.onnx
// RUN: kiln-opt %t.mlp.onnx --trainable=all --loss=cross_entropy --target=labels | FileCheck %s --check-prefix=LOSS
// LOSS: %{{.*}}: tensor<4xi32> {kiln.name = "labels"}) -> (tensor<f32> {kiln.name = "loss"})
// LOSS: kiln.cross_entropy
// RUN: kiln-opt %t.mlp.onnx --trainable=all --loss=mse --target=y_true | FileCheck %s --check-prefix=MSE
// MSE: %{{.*}}: tensor<4x2xf32> {kiln.name = "y_true"}) -> (tensor<f32> {kiln.name = "loss"})
// MSE: kiln.mse_loss

// --trainable=all trains the weights, not the floating-point initializers
// an op reads as settings: batch norm's running statistics, Clip's bounds
// (ReLU6), Resize's scales, and an initializer holding an infinity (a
// mask's fill value).
// RUN: python3 %S/Inputs/make_onnx_model.py operand_constants %t.settings.onnx
// RUN: kiln-opt %t.settings.onnx --trainable=all 2>/dev/null | FileCheck %s --check-prefix=ALL
// ALL: func.func @loss(%{{.*}}: tensor<3xf32> {kiln.name = "scale", kiln.param
// ALL-SAME: %{{.*}}: tensor<3xf32> {kiln.name = "bias", kiln.param
// ALL-SAME: %{{.*}}: tensor<8xf32> {kiln.name = "w", kiln.param
// ALL-SAME: %{{.*}}: tensor<2x3x4x4xf32> {kiln.name = "x"})
// ALL: kiln.constant {{.*}} {kiln.name = "mean"}
// ALL: kiln.constant {{.*}} {kiln.name = "low"}
// ALL: kiln.constant {{.*}} {kiln.name = "scales"}
// ALL: kiln.constant {{.*}} {kiln.name = "floor"}
// RUN: kiln-opt %t.settings.onnx --trainable=all 2>/dev/null | grep -o "kiln.param" | wc -l | FileCheck %s --check-prefix=COUNT
// COUNT: {{^ *3$}}
// Named, they are refused with the reason.
// RUN: not kiln-opt %t.settings.onnx --trainable=w,scales 2>&1 | FileCheck %s --check-prefix=NAMED
// NAMED: error: --trainable names 'scales', which node 'up0' (Resize) reads as a setting (input 2), not a weight

// Training a graph with inference-mode batch norm keeps its statistics
// fixed: imported as the graph says, with a warning at the node.
// RUN: python3 %S/Inputs/make_onnx_model.py batchnorm %t.bn.onnx
// RUN: kiln-opt %t.bn.onnx --trainable=scale,bias 2>&1 | FileCheck %s --check-prefix=BN
// BN: .bn.onnx: node 'bn0' (BatchNormalization): warning: BatchNormalization in inference mode normalises with the graph's fixed mean and variance while training
// BN: func.func @loss(%{{.*}}: tensor<3xf32> {kiln.name = "scale", kiln.param
