// RUN: kiln-opt %s --kiln-autodiff=function=loss | FileCheck %s
// RUN: kiln-opt %s --kiln-autodiff="function=input_loss wrt=0,1,2" | FileCheck %s --check-prefix=INPUT

// max_pool2d_backward routes the loss gradient to the window maxima of the
// conv result; the filter gradient is conv2d_backward_filter with the
// forward attributes and the bias gradient a sum over N, H and W (NHWC).
// The input is not differentiated, so no conv2d_backward_input survives.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32> {kiln.name = "loss"}, tensor<6x3x3x2xf32> {kiln.name = "grad.f"}, tensor<6xf32> {kiln.name = "grad.b"})
// CHECK: %[[Y:.*]] = kiln.conv2d %arg0, %arg1, %arg2 layout = nhwc
// CHECK: %[[P:.*]] = kiln.max_pool2d %[[Y]]
// CHECK: kiln.add %[[P]], %{{.*}} : tensor<2x2x2x6xf32>, tensor<2x2x2x6xf32>
// CHECK: %[[GP:.*]] = kiln.mul %{{.*}}, %{{.*}} : tensor<2x2x2x6xf32>, tensor<f32>
// CHECK: %[[GY:.*]] = kiln.max_pool2d_backward %[[GP]], %[[Y]] layout = nhwc kernel = [2, 2] stride = [2, 1] : tensor<2x2x2x6xf32>, tensor<2x4x3x6xf32>
// CHECK-NOT: conv2d_backward_input
// CHECK: %[[DF:.*]] = kiln.conv2d_backward_filter %[[GY]], %arg0 layout = nhwc stride = [2, 2] padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2 : tensor<2x4x3x6xf32>, tensor<2x9x8x4xf32> -> tensor<6x3x3x2xf32>
// CHECK: %[[DB:.*]] = kiln.reduce_sum %[[GY]] dims = [0, 1, 2] : tensor<2x4x3x6xf32>
// CHECK: return %{{.*}}, %[[DF]], %[[DB]] : tensor<f32>, tensor<6x3x3x2xf32>, tensor<6xf32>

func.func @loss(%x: tensor<2x9x8x4xf32>,
                %f: tensor<6x3x3x2xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "f"},
                %b: tensor<6xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
                %t: tensor<2x2x2x6xf32>) -> tensor<f32> {
  %y = kiln.conv2d %x, %f, %b layout = nhwc stride = [2, 2] padding = [1, 2, 0, 1]
      dilation = [2, 2] groups = 2 : tensor<2x9x8x4xf32>, tensor<6x3x3x2xf32>, tensor<6xf32>
  %p = kiln.max_pool2d %y layout = nhwc kernel = [2, 2] stride = [2, 1] : tensor<2x4x3x6xf32>
  %l = kiln.mse_loss %p, %t reduction = sum : tensor<2x2x2x6xf32>
  return %l : tensor<f32>
}

// With the input differentiated too, its gradient is the transposed
// convolution; NCHW sums the bias gradient over dims 0, 2 and 3.
// INPUT-LABEL: func.func @input_loss_grad
// INPUT: %[[Y:.*]] = kiln.conv2d %arg0, %arg1, %arg2 layout = nchw
// INPUT: kiln.add %[[Y]], %{{.*}} : tensor<2x6x4x3xf32>, tensor<2x6x4x3xf32>
// INPUT: %[[G:.*]] = kiln.mul %{{.*}}, %{{.*}} : tensor<2x6x4x3xf32>, tensor<f32>
// INPUT: %[[DX:.*]] = kiln.conv2d_backward_input %[[G]], %arg1 layout = nchw stride = [2, 2] padding = [1, 2, 0, 1] dilation = [2, 2] groups = 2 : tensor<2x6x4x3xf32>, tensor<6x2x3x3xf32> -> tensor<2x4x9x8xf32>
// INPUT: %[[DF:.*]] = kiln.conv2d_backward_filter %[[G]], %arg0 layout = nchw {{.*}} -> tensor<6x2x3x3xf32>
// INPUT: %[[DB:.*]] = kiln.reduce_sum %[[G]] dims = [0, 2, 3] : tensor<2x6x4x3xf32>
// INPUT: return %{{.*}}, %[[DX]], %[[DF]], %[[DB]]
func.func @input_loss(%x: tensor<2x4x9x8xf32> {kiln.param = #kiln.init<zeros>},
                      %f: tensor<6x2x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.1>},
                      %b: tensor<6xf32> {kiln.param = #kiln.init<zeros>},
                      %t: tensor<2x6x4x3xf32>) -> tensor<f32> {
  %y = kiln.conv2d %x, %f, %b layout = nchw stride = [2, 2] padding = [1, 2, 0, 1]
      dilation = [2, 2] groups = 2 : tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>
  %l = kiln.mse_loss %y, %t reduction = sum : tensor<2x6x4x3xf32>
  return %l : tensor<f32>
}
