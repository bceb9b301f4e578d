// A nearest resize of scale 4/3 printed its scales with six digits, so the
// train step kiln-opt wrote (and any printed module) resized by 1.333333:
// output 2 reads x = 2 / 1.333333 = 1.5000004, rounded up to element 2
// instead of the tie 1.5 rounded down to element 1, and the gradient
// kiln-ref computed from the text was another function's. Found by the
// graph fuzzer (graph 1796606183:87, reduced from 25 ops to 3): central
// differences disagreed with the gradient. The scales now print exactly;
// with outputs reading elements 0, 1, 1, 2 of each row, the mean's
// gradient is 1/16, 2/16, 1/16.
// RUN: kiln-opt %s --kiln-make-train-step="function=loss optimizer=sgd" -o %t.mlir
// RUN: FileCheck %s --check-prefix=TEXT < %t.mlir
// RUN: kiln-ref %t.mlir --function forward_backward --random-seed 3 --init-params --precision f64 --print --print-count 12 | FileCheck %s

// TEXT: kiln.resize %{{.*}} scales = [1.0, 1.3333333333333333]
// TEXT: kiln.resize_backward %{{.*}} scales = [1.0, 1.3333333333333333]
// CHECK: grad.p0: tensor<4x3xf32> = [0.0625, 0.125, 0.0625, 0.0625, 0.125, 0.0625, 0.0625, 0.125, 0.0625, 0.0625, 0.125, 0.0625]
func.func @loss(
    %p0: tensor<4x3xf32> {kiln.param = #kiln.init<xavier, gain = 1.0>, kiln.name = "p0"},
    %v17: tensor<f32> {kiln.name = "v17"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %v5 = kiln.resize %p0 mode = nearest coordinates = asymmetric scales = [1.0, 1.3333333333333333] : tensor<4x3xf32> -> tensor<4x4xf32>
  %v18 = kiln.reduce_mean %v5 dims = [0, 1] : tensor<4x4xf32>
  %v23 = kiln.add %v17, %v18 : tensor<f32>, tensor<f32>
  return %v23 : tensor<f32>
}
