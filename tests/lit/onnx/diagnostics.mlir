// Every op, attribute and element type kiln cannot express is an error that
// names the ONNX node (or graph value) and what is unsupported.
// RUN: python3 %S/Inputs/make_onnx_model.py unsupported_op %t.op.onnx
// RUN: not kiln-opt %t.op.onnx 2>&1 | FileCheck %s --check-prefix=OP
// OP: .op.onnx: node 'det0' (Det): error: ONNX op 'Det' is not supported by the kiln importer

// RUN: python3 %S/Inputs/make_onnx_model.py unsupported_attribute %t.attr.onnx
// RUN: not kilnc %t.attr.onnx --inference 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: .attr.onnx: node 'pool0' (MaxPool): error: ONNX MaxPool-12 (opset 17): kiln does not support dilations other than 1

// RUN: python3 %S/Inputs/make_onnx_model.py unsupported_dtype %t.dtype.onnx
// RUN: not kiln-ref %t.dtype.onnx --function loss --random-seed 1 --print 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: .dtype.onnx: input 'x': error: graph input 'x' has element type DOUBLE, which kiln does not support

// RUN: python3 %S/Inputs/make_onnx_model.py bad_broadcast %t.bcast.onnx
// RUN: not kiln-opt %t.bcast.onnx 2>&1 | FileCheck %s --check-prefix=BCAST
// BCAST: node 'add0' (Add): error: ONNX Add operands 'tensor<2x3xf32>' and 'tensor<4xf32>' do not broadcast

// A value written by two nodes, or a node writing a graph input: an error
// at the second writer naming the first (ONNX values have one writer).
// RUN: python3 %S/Inputs/make_onnx_model.py two_writers %t.twice.onnx
// RUN: not kilnc %t.twice.onnx --inference -o %t.twice.kiln 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not kiln-ref %t.twice.onnx --function loss --random-seed 1 --print 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: .twice.onnx: node 'neg0' (Neg): error: ONNX Neg: output 'y' is already written by node 'relu0' (Relu); every ONNX value has one writer
// RUN: python3 %S/Inputs/make_onnx_model.py overwritten_input %t.input.onnx
// RUN: not kiln-opt %t.input.onnx 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: .input.onnx: node 'neg0' (Neg): error: ONNX Neg: output 'x' is already written by graph input 'x'; every ONNX value has one writer

// Training options that do not fit the model.
// RUN: python3 %S/Inputs/make_onnx_model.py mlp %t.mlp.onnx
// RUN: not kilnc %t.mlp.onnx --trainable=w1,w9 --emit=mlir 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: error: --trainable names 'w9', which is not an initializer of the graph
// RUN: not kilnc %t.mlp.onnx --loss=mse --emit=mlir 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: error: --loss needs --target=NAME
// RUN: not kilnc %t.mlp.onnx --loss=hinge --target=t --emit=mlir 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: error: --loss must be mse or cross_entropy, not 'hinge'

// A file that is not an ONNX model.
// RUN: echo garbage > %t.bad.onnx
// RUN: not kilnc %t.bad.onnx 2>&1 | FileCheck %s --check-prefix=FILE
// FILE: error: '{{.*}}.bad.onnx' is not an ONNX model
