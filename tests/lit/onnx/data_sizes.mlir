// An initializer's data is checked against its dims before anything is
// read or allocated: dims of 10^18 elements with 4 bytes of data, dims whose
// element count overflows, and typed data shorter than the dims are errors
// at the initializer, whether it becomes a constant or a parameter.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/make_onnx_model.py huge_dims %t/huge.onnx
// RUN: not kilnc %t/huge.onnx --inference -o %t/huge.kiln 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not kilnc %t/huge.onnx --trainable=all --train=sgd --emit=mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not kiln-ref %t/huge.onnx --function loss --random-seed 1 --print 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: huge.onnx: initializer 'c': error: initializer 'c' holds 4 bytes in raw_data but its dims [1000000000, 1000000000] of FLOAT need 4000000000000000000 bytes
// HUGE-NOT: LLVM ERROR

// RUN: python3 %S/Inputs/make_onnx_model.py overflowing_dims %t/overflow.onnx
// RUN: not kilnc %t/overflow.onnx --inference -o %t/overflow.kiln 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// RUN: not kilnc %t/overflow.onnx --trainable=all --train=sgd --emit=mlir 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: overflow.onnx: initializer 'c': error: initializer 'c' has dims [4611686018427387904, 4], more than 2^63 elements

// RUN: python3 %S/Inputs/make_onnx_model.py short_typed_data %t/short.onnx
// RUN: not kilnc %t/short.onnx --inference -o %t/short.kiln 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: not kilnc %t/short.onnx --trainable=all --train=sgd --emit=mlir 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: short.onnx: initializer 'c': error: initializer 'c' holds 1 elements in its typed data but its dims [2] of FLOAT need 2 elements
