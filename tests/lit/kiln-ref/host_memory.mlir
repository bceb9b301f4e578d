// Values the reference interpreter cannot hold in this machine's memory (f64
// elements) are errors naming the argument or the op, never an abort.
// RUN: not kiln-ref %s --function big_argument --random-seed 1 -o %t.a.safetensors 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not kiln-ref %s --function big_result --random-seed 1 -o %t.b.safetensors 2>&1 | FileCheck %s --check-prefix=RESULT

// ARG: argument 'x' of 'big_argument' needs 8796093022208 bytes as f64 values, more than this machine's
func.func @big_argument(%x: tensor<1099511627776xf32> {kiln.name = "x"}) -> tensor<1099511627776xf32> {
  return %x : tensor<1099511627776xf32>
}

// RESULT: host_memory.mlir:[[@LINE+2]]:{{[0-9]+}}: error: 'kiln.broadcast_to' op needs 8796093022208 bytes for its result of type 'tensor<1048576x1048576xf32>' in the reference interpreter (f64 values)
func.func @big_result(%x: tensor<f32> {kiln.name = "x"}) -> tensor<1048576x1048576xf32> {
  %y = kiln.broadcast_to %x : tensor<f32> -> tensor<1048576x1048576xf32>
  return %y : tensor<1048576x1048576xf32>
}
