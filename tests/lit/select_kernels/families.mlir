// --kiln-select-kernels records a kernel on every fusion, whatever its
// family: the launch decisions of the pointwise, pool, resize, embedding,
// batch_norm, custom and row-reduction planners as their #kiln_cuda
// attributes, sized for the target (132 SMs on sm_90, 108 on sm_80), and
// the target on the module. The printed attributes parse back to the same.
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="arch=sm_80 tf32=true" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels | not kiln-opt --kiln-select-kernels=arch=sm_80 2>&1 | FileCheck %s --check-prefix=TARGET

// CHECK: module attributes {kiln_cuda.target = #kiln_cuda.target<"sm_90">}
// SM80: module attributes {kiln_cuda.target = #kiln_cuda.target<"sm_80", tf32>}
// TARGET: error: kiln_cuda.target: the module's kernels are chosen for #kiln_cuda.target<"sm_90">, not for the pass's #kiln_cuda.target<"sm_80"> (arch and tf32)

// One loop that reads the bias broadcast, an element a step: 8192 steps,
// 256 threads a block, 32 blocks.
// CHECK-LABEL: func.func @pointwise
// CHECK: kiln.fusion "pointwise"{{.*}}kiln_cuda.kernel = #kiln_cuda.pointwise<threads = [256], widths = [1], blocks = [32]>
func.func @pointwise(%x: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = kiln.add %x, %b : tensor<64x128xf32>, tensor<128xf32>
  %1 = kiln.tanh %0 : tensor<64x128xf32>
  return %1 : tensor<64x128xf32>
}

// Two independent results of two shapes (a horizontally merged fusion):
// one multi-tensor kernel of two groups, each with its width (16-byte
// steps of f32; too few bf16 elements for a step of 8) and blocks.
// CHECK-LABEL: func.func @groups
// CHECK: kiln.fusion "pointwise"{{.*}}kiln_cuda.kernel = #kiln_cuda.pointwise<threads = [64], widths = [4, 1], blocks = [1, 1]>
func.func @groups(%x: tensor<16x16xf32>, %y: tensor<6xbf16>) -> (tensor<16x16xf32>, tensor<6xbf16>) {
  %0:2 = kiln.fusion "pointwise" (%x, %y) : (tensor<16x16xf32>, tensor<6xbf16>) -> (tensor<16x16xf32>, tensor<6xbf16>) {
  ^bb0(%a: tensor<16x16xf32>, %c: tensor<6xbf16>):
    %1 = kiln.exp %a : tensor<16x16xf32>
    %2 = kiln.neg %c : tensor<6xbf16>
    kiln.yield %1, %2 : tensor<16x16xf32>, tensor<6xbf16>
  }
  return %0#0, %0#1 : tensor<16x16xf32>, tensor<6xbf16>
}

// The row kernels of a softmax: sized for 264 blocks on sm_90, 216 on sm_80.
// CHECK-LABEL: func.func @softmax
// CHECK: kiln.fusion "reduction"{{.*}}kiln_cuda.kernel = #kiln_cuda.row_reduction<blocks = 264>
// SM80-LABEL: func.func @softmax
// SM80: kiln_cuda.kernel = #kiln_cuda.row_reduction<blocks = 216>
func.func @softmax(%x: tensor<32x512xf32>) -> tensor<32x512xf32> {
  %0 = kiln.softmax %x dim = 1 : tensor<32x512xf32>
  return %0 : tensor<32x512xf32>
}

// Channels-last pooling takes 4 f32 channels a thread (8192 items, 32
// blocks of 256); the gradient of overlapping windows gathers from a
// stored argmax: a launch over the 2048 windows, one over the 7200 inputs.
// CHECK-LABEL: func.func @pool
// CHECK: kiln.fusion "pool"{{.*}}kiln_cuda.kernel = #kiln_cuda.pool<vector = 4, threads = [256], blocks = [32]>
// CHECK: kiln.fusion "pool"{{.*}}kiln_cuda.kernel = #kiln_cuda.pool<vector = 1, threads = [256, 256], blocks = [8, 29], argmax>
func.func @pool(%x: tensor<2x32x32x64xf32>, %g: tensor<2x16x8x8xf32>, %i: tensor<2x16x15x15xf32>)
    -> (tensor<2x16x16x64xf32>, tensor<2x16x15x15xf32>) {
  %0 = kiln.max_pool2d %x layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x32x32x64xf32>
  %1 = kiln.max_pool2d_backward %g, %i layout = nchw kernel = [3, 3] stride = [2, 2]
      padding = [1, 1, 1, 1] : tensor<2x16x8x8xf32>, tensor<2x16x15x15xf32>
  return %0, %1 : tensor<2x16x16x64xf32>, tensor<2x16x15x15xf32>
}

// 24 elements of the input gradient: one warp.
// CHECK-LABEL: func.func @resize
// CHECK: kiln.fusion "resize"{{.*}}kiln_cuda.kernel = #kiln_cuda.resize<threads = 32, blocks = 1>
func.func @resize(%g: tensor<2x3x8xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.resize_backward %g mode = nearest coordinates = asymmetric scales = [1.0, 1.0, 2.0]
      : tensor<2x3x8xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// Rows of 64 f32: 16-byte steps of 4 elements.
// CHECK-LABEL: func.func @embedding
// CHECK: kiln.fusion "embedding"{{.*}}kiln_cuda.kernel = #kiln_cuda.embedding<vector = 4>
func.func @embedding(%g: tensor<4x32x64xf32>, %i: tensor<4x32xi32>) -> tensor<10x64xf32> {
  %0 = kiln.embedding_backward %g, %i : tensor<4x32x64xf32>, tensor<4x32xi32> -> tensor<10x64xf32>
  return %0 : tensor<10x64xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK: kiln.fusion "batch_norm"{{.*}}kiln_cuda.kernel = #kiln_cuda.batch_norm<blocks = 264>
// SM80-LABEL: func.func @batch_norm
// SM80: kiln_cuda.kernel = #kiln_cuda.batch_norm<blocks = 216>
func.func @batch_norm(%x: tensor<4x3x2xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>,
                      %rm: tensor<3xf32>, %rv: tensor<3xf32>) -> tensor<4x3x2xf32> {
  %y, %m, %v, %rm1, %rv1 = kiln.batch_norm %x, %g, %b running %rm, %rv momentum = 0.2
      : tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  return %y : tensor<4x3x2xf32>
}

// A user's kernel: its block size is the op's (256 by default), the grid
// the planner's, a thread per element written.
// CHECK-LABEL: func.func @custom
// CHECK: kiln.fusion "custom"{{.*}}kiln_cuda.kernel = #kiln_cuda.custom<blocks = 4>
func.func @custom(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %y = kiln.custom "fwd" from "k.cu" (%x) : (tensor<1000xf32>) -> tensor<1000xf32>
  return %y : tensor<1000xf32>
}
