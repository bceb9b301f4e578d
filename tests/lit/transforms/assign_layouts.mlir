// RUN: kiln-opt %s --kiln-assign-layouts | FileCheck %s
// RUN: kiln-opt %s --kiln-assign-layouts="function=flatten" | FileCheck %s --check-prefix=FLAT
// RUN: kiln-opt %s --kiln-assign-layouts="function=plain" | FileCheck %s --check-prefix=PLAIN
// RUN: kiln-opt %s --kiln-assign-layouts="function=constant_filter" | FileCheck %s --check-prefix=CONST
// RUN: kiln-opt %s --kiln-assign-layouts="function=diffusion" | FileCheck %s --check-prefix=GN
// RUN: not kiln-opt %s --kiln-assign-layouts="function=nope" 2>&1 | FileCheck %s --check-prefix=MISSING

// An NCHW residual block as PyTorch exports it: the input enters NHWC once,
// the filters are read through transposes, a per-channel bias [C, 1, 1] is
// broadcast against NHWC, and the global average pool over H and W leaves
// [N, C] as before: no transpose back at all.
// CHECK-LABEL: func.func @loss
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x3x8x8xf32>, %[[W1:[a-z0-9]+]]: tensor<4x3x3x3xf32> {{.*}}, %[[W2:[a-z0-9]+]]: tensor<4x4x3x3xf32> {{.*}}, %[[CB:[a-z0-9]+]]: tensor<4x1x1xf32>
// CHECK: %[[XT:.*]] = kiln.transpose %[[X]] perm = [0, 2, 3, 1] : tensor<2x3x8x8xf32>
// CHECK: %[[W1T:.*]] = kiln.transpose %[[W1]] perm = [0, 2, 3, 1] : tensor<4x3x3x3xf32>
// CHECK: %[[C1:.*]] = kiln.conv2d %[[XT]], %[[W1T]] layout = nhwc padding = [1, 1, 1, 1] : tensor<2x8x8x3xf32>, tensor<4x3x3x3xf32>
// CHECK: kiln.batch_norm %[[C1]], {{.*}} dim = 3 {{.*}}: tensor<2x8x8x4xf32>
// CHECK: kiln.relu {{.*}} : tensor<2x8x8x4xf32>
// CHECK: %[[P:.*]] = kiln.max_pool2d {{.*}} layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x8x8x4xf32>
// CHECK: %[[W2T:.*]] = kiln.transpose %[[W2]] perm = [0, 2, 3, 1]
// CHECK: %[[C2:.*]] = kiln.conv2d %[[P]], %[[W2T]] layout = nhwc
// CHECK: %[[CBR:.*]] = kiln.reshape %[[CB]] : tensor<4x1x1xf32> -> tensor<1x4x1x1xf32>
// CHECK: %[[CBT:.*]] = kiln.transpose %[[CBR]] perm = [0, 2, 3, 1] : tensor<1x4x1x1xf32>
// CHECK: kiln.add %[[C2]], %[[CBT]] : tensor<2x4x4x4xf32>, tensor<1x1x1x4xf32>
// CHECK: %[[R:.*]] = kiln.add {{.*}}, %[[P]] : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
// CHECK: %[[CAT:.*]] = kiln.concat {{.*}}, %[[R]] dim = 3 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
// CHECK: kiln.reduce_mean %[[CAT]] dims = [1, 2] : tensor<2x4x4x8xf32>
// CHECK-NOT: perm = [0, 3, 1, 2]
// CHECK: kiln.matmul
func.func @loss(%x: tensor<2x3x8x8xf32>,
                %w1: tensor<4x3x3x3xf32> {kiln.param = #kiln.init<kaiming>},
                %g: tensor<4xf32> {kiln.param = #kiln.init<ones>},
                %b: tensor<4xf32> {kiln.param = #kiln.init<zeros>},
                %w2: tensor<4x4x3x3xf32> {kiln.param = #kiln.init<kaiming>},
                %cb: tensor<4x1x1xf32> {kiln.param = #kiln.init<zeros>},
                %fc: tensor<8x5xf32> {kiln.param = #kiln.init<xavier>},
                %t: tensor<2x5xf32>) -> tensor<f32> {
  %c1 = kiln.conv2d %x, %w1 layout = nchw padding = [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
  %n1, %m1, %v1 = kiln.batch_norm %c1, %g, %b : tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>
  %h1 = kiln.relu %n1 : tensor<2x4x8x8xf32>
  %p = kiln.max_pool2d %h1 layout = nchw kernel = [2, 2] stride = [2, 2] : tensor<2x4x8x8xf32>
  %c2 = kiln.conv2d %p, %w2 layout = nchw padding = [1, 1, 1, 1] : tensor<2x4x4x4xf32>, tensor<4x4x3x3xf32>
  %c2b = kiln.add %c2, %cb : tensor<2x4x4x4xf32>, tensor<4x1x1xf32>
  %r = kiln.add %c2b, %p : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %s = kiln.sigmoid %r : tensor<2x4x4x4xf32>
  %cat = kiln.concat %s, %r dim = 1 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
  %gap = kiln.reduce_mean %cat dims = [2, 3] : tensor<2x8x4x4xf32>
  %o = kiln.matmul %gap, %fc : tensor<2x8xf32>, tensor<8x5xf32>
  %l = kiln.mse_loss %o, %t reduction = mean : tensor<2x5xf32>
  return %l : tensor<f32>
}

// A value a reshape needs in NCHW (a flatten) leaves through one transpose
// back; a graph without a convolution is left as written.
// FLAT-LABEL: func.func @flatten
// FLAT: kiln.conv2d {{.*}} layout = nhwc
// FLAT: %[[BACK:.*]] = kiln.transpose {{.*}} perm = [0, 3, 1, 2] : tensor<2x4x4x4xf32>
// FLAT: kiln.reshape %[[BACK]] : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
func.func @flatten(%x: tensor<2x3x4x4xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<2x64xf32> {
  %c = kiln.conv2d %x, %w layout = nchw : tensor<2x3x4x4xf32>, tensor<4x3x1x1xf32>
  %h = kiln.relu %c : tensor<2x4x4x4xf32>
  %f = kiln.reshape %h : tensor<2x4x4x4xf32> -> tensor<2x64xf32>
  return %f : tensor<2x64xf32>
}

// PLAIN-LABEL: func.func @plain
// PLAIN-NOT: kiln.transpose
// PLAIN: kiln.max_pool2d {{.*}} layout = nchw
func.func @plain(%x: tensor<2x3x4x4xf32>) -> tensor<2x3x2x2xf32> {
  %h = kiln.relu %x : tensor<2x3x4x4xf32>
  %p = kiln.max_pool2d %h layout = nchw kernel = [2, 2] stride = [2, 2] : tensor<2x3x4x4xf32>
  return %p : tensor<2x3x2x2xf32>
}

// MISSING: error: kiln-assign-layouts: no function named 'nope'

// A diffusion block: the group norm and its SiLU stay in the NHWC region,
// the norm over the last dim; only the input enters and the result leaves.
// GN-LABEL: func.func @diffusion
// GN: kiln.conv2d {{.*}} layout = nhwc
// GN-NOT: perm = [0, 3, 1, 2]
// GN: kiln.group_norm {{.*}} groups = 4 dim = 3 : tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>
// GN-NEXT: kiln.silu {{.*}} : tensor<2x4x4x8xf32>
// GN-NOT: perm = [0, 3, 1, 2]
// GN: %[[C2:.*]] = kiln.conv2d {{.*}} layout = nhwc
// GN-NEXT: kiln.transpose %[[C2]] perm = [0, 3, 1, 2] : tensor<2x4x4x3xf32>
// GN-NOT: kiln.transpose
// GN: return
func.func @diffusion(%x: tensor<2x3x4x4xf32>, %w1: tensor<8x3x3x3xf32>,
                     %g: tensor<8xf32>, %b: tensor<8xf32>,
                     %w2: tensor<3x8x3x3xf32>) -> tensor<2x3x4x4xf32> {
  %c1 = kiln.conv2d %x, %w1 layout = nchw padding = [1, 1, 1, 1] : tensor<2x3x4x4xf32>, tensor<8x3x3x3xf32>
  %n = kiln.group_norm %c1, %g, %b groups = 4 : tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>
  %h = kiln.silu %n : tensor<2x8x4x4xf32>
  %c2 = kiln.conv2d %h, %w2 layout = nchw padding = [1, 1, 1, 1] : tensor<2x8x4x4xf32>, tensor<3x8x3x3xf32>
  return %c2 : tensor<2x3x4x4xf32>
}

// What the pass leaves compiles and its backward follows: a training step of
// the residual block, generated and compiled for the GPU.
// RUN: kilnc %s --layout=channels-last --train=sgd -o %t.kiln 2>&1 | FileCheck %s --allow-empty --check-prefix=COMPILES
// COMPILES-NOT: error

// An inference model's constant filter (an ONNX initializer) is stored NHWC:
// the transpose is folded into the constant, which keeps its name with the
// layout it now holds; element [o, c, kh, kw] moves to [o, kh, kw, c].
// CONST-LABEL: func.func @constant_filter
// CONST: %[[W:.*]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]], {{\[}}[2.000000e+00, 6.000000e+00], [3.000000e+00, 7.000000e+00]]]]> : tensor<1x2x2x2xf32> {kiln.name = "w.nhwc"}
// CONST-NOT: kiln.transpose %[[W]]
// CONST: kiln.conv2d %{{.*}}, %[[W]] layout = nhwc
// CONST-NOT: kiln.constant {{.*}}"w"
func.func @constant_filter(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %w = kiln.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]> : tensor<1x2x2x2xf32> {kiln.name = "w"}
  %c = kiln.conv2d %x, %w layout = nchw : tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>
  return %c : tensor<1x1x2x2xf32>
}
