// Einsum as kiln.matmul (with its operand transposes) and CumSum as a
// log-step scan compile for inference and for training in f32 and bf16,
// with the GELU PyTorch writes out as one kiln.gelu. The numbers are checked
// by the opset node tests (//tests/onnx:onnx_opset_tests).
// RUN: python3 %S/Inputs/make_onnx_model.py attention_block %t.attn.onnx
// RUN: kiln-opt %t.attn.onnx | FileCheck %s
// CHECK: kiln.matmul {{.*}} transpose_rhs : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK: kiln.pad
// CHECK: kiln.gelu
// CHECK: kiln.matmul {{.*}} : tensor<2x4x4xf32>, tensor<2x4x8xf32>
// --trainable=all takes the floating-point initializers; the integer
// 'axis' stays a constant.
// RUN: kiln-opt %t.attn.onnx --trainable=all | FileCheck %s --check-prefix=PARAMS
// PARAMS: func.func @loss(%{{.*}}: tensor<8x8xf32> {kiln.name = "wq", kiln.param = {{.*}}}, %{{.*}}: tensor<8x8xf32> {kiln.name = "wk", kiln.param = {{.*}}}, %{{.*}}: tensor<2x4x8xf32> {kiln.name = "x"})
// RUN: kilnc %t.attn.onnx --inference -o %t.inference.kiln
// RUN: kilnc %t.attn.onnx --trainable=all --loss=mse --target=t --train=sgd -o %t.sgd.kiln
// RUN: kilnc %t.attn.onnx --trainable=all --loss=mse --target=t --train=adamw --precision=bf16 -o %t.bf16.kiln

// What kiln's Einsum does not take is an error naming it.
// RUN: python3 %S/Inputs/make_onnx_model.py einsum_diagonal %t.diag.onnx
// RUN: not kiln-opt %t.diag.onnx 2>&1 | FileCheck %s --check-prefix=DIAG
// DIAG: node 'einsum0' (Einsum): error: ONNX Einsum-12 (opset 17): kiln does not support the index 'i' twice in the term 'bii' (a diagonal)
// RUN: python3 %S/Inputs/make_onnx_model.py einsum_three %t.three.onnx
// RUN: not kiln-opt %t.three.onnx 2>&1 | FileCheck %s --check-prefix=THREE
// THREE: error: ONNX Einsum-12 (opset 17): kiln does not support an Einsum of 3 operands
// RUN: python3 %S/Inputs/make_onnx_model.py einsum_broadcast %t.bcast.onnx
// RUN: not kiln-opt %t.bcast.onnx 2>&1 | FileCheck %s --check-prefix=BCAST
// BCAST: error: ONNX Einsum-12 (opset 17): kiln does not support indices of different sizes (1 and 2): broadcasting
