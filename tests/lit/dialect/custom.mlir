// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// kiln.custom and kiln.custom_backward print as they parse: the entry, its
// file, the tensors, and the optional backward, parameters and block size.
// CHECK-LABEL: func.func @forward
// CHECK: kiln.custom "scaled_sq_relu" from "scaled_sq_relu.cu" (%arg0, %arg1) backward "scaled_sq_relu_grad" params {slope = 1.000000e-01 : f32} block_size = 128 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// A second file for the backward, integer parameters, an i32 input, two
// results, the default block size.
// CHECK: %{{.*}}:2 = kiln.custom "ns::split" from "split.cu" (%arg0, %arg2) backward "ns::split_grad" backward_from "split_grad.cu" params {axis = 1 : i64, eps = 1.000000e-05 : f64} : (tensor<4x8xf32>, tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4x4xbf16>)
// No inputs at all: a generator.
// CHECK: kiln.custom "fill" from "/abs/fill.cu" () : () -> tensor<3xf32>
func.func @forward(%x: tensor<4x8xf32>, %s: tensor<8xf32>, %i: tensor<4xi32>)
    -> (tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xbf16>, tensor<3xf32>) {
  %y = kiln.custom "scaled_sq_relu" from "scaled_sq_relu.cu" (%x, %s)
      backward "scaled_sq_relu_grad" params {slope = 0.1 : f32} block_size = 128
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a, %b = kiln.custom "ns::split" from "split.cu" (%x, %i)
      backward "ns::split_grad" backward_from "split_grad.cu"
      params {eps = 1.0e-5 : f64, axis = 1 : i64}
      : (tensor<4x8xf32>, tensor<4xi32>) -> (tensor<4x4xf32>, tensor<4x4xbf16>)
  %f = kiln.custom "fill" from "/abs/fill.cu" () : () -> tensor<3xf32>
  return %y, %a, %b, %f : tensor<4x8xf32>, tensor<4x4xf32>, tensor<4x4xbf16>, tensor<3xf32>
}

// CHECK-LABEL: func.func @backward
// CHECK: %{{.*}}:2 = kiln.custom_backward "g" from "k.cu" inputs(%arg0, %arg1, %arg2) outputs(%arg3) output_grads(%arg3) params {p = 2 : i64} block_size = 64 : (tensor<4x8xf32>, tensor<4xi32>, tensor<8xf16>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf16>)
func.func @backward(%x: tensor<4x8xf32>, %i: tensor<4xi32>, %s: tensor<8xf16>,
                    %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf16>) {
  %dx, %ds = kiln.custom_backward "g" from "k.cu" inputs(%x, %i, %s) outputs(%y)
      output_grads(%y) params {p = 2 : i64} block_size = 64
      : (tensor<4x8xf32>, tensor<4xi32>, tensor<8xf16>, tensor<4x8xf32>, tensor<4x8xf32>)
        -> (tensor<4x8xf32>, tensor<8xf16>)
  return %dx, %ds : tensor<4x8xf32>, tensor<8xf16>
}
