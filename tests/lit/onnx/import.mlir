// An ONNX MLP (Gemm, Relu, Gemm with initializers) through kiln-opt: the
// initializers become constants named as they are, every op is located at
// its ONNX node.
// RUN: python3 %S/Inputs/make_onnx_model.py mlp %t.onnx
// RUN: kiln-opt %t.onnx --mlir-print-debuginfo | FileCheck %s

// CHECK: func.func @loss(%[[X:.*]]: tensor<4x3xf32> {kiln.name = "x"}{{.*}}) -> (tensor<4x2xf32> {kiln.name = "y"})
// CHECK: %[[W1:.*]] = kiln.constant {{.*}} : tensor<3x5xf32> {kiln.name = "w1"} loc(#[[INIT:loc[0-9]*]])
// CHECK: %[[MM:.*]] = kiln.matmul %[[X]], %[[W1]] : tensor<4x3xf32>, tensor<3x5xf32> loc(#[[FC1:loc[0-9]*]])
// CHECK: kiln.add %[[MM]], {{.*}} loc(#[[FC1]])
// CHECK: kiln.relu {{.*}} loc(#[[RELU:loc[0-9]*]])
// CHECK: #[[INIT]] = loc("initializer 'w1'"
// CHECK: #[[FC1]] = loc("node 'fc1' (Gemm)"
// CHECK: #[[RELU]] = loc("node 'relu1' (Relu)"

// The LSTM maps onto kiln.rnn.
// RUN: python3 %S/Inputs/make_onnx_model.py lstm %t.lstm.onnx
// RUN: kiln-opt %t.lstm.onnx | FileCheck %s --check-prefix=LSTM
// LSTM: kiln.rnn {{.*}} function = lstm : tensor<2x4x4x1x3xf32>, tensor<4x1x3x3xf32>, tensor<4x1x3xf32>, tensor<2x2x1x3xf32>
