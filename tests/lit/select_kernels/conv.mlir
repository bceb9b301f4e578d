// --kiln-select-kernels records the implicit-GEMM kernel the planner
// chooses for each conv fusion as its kiln_cuda.kernel (a #kiln_cuda.conv);
// depthwise convolutions run the direct kernels, #kiln_cuda.conv<depthwise>.
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels | FileCheck %s
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="tma=false" | FileCheck %s --check-prefix=NOTMA
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --kiln-fuse --kiln-select-kernels="tf32=true" | FileCheck %s --check-prefix=TF32

// A channels-last layer of 64 channels (ResNet-50's 3x3 64->64 at 56x56):
// the forward pass on TMA copies; the input gradient on wgmma; the filter
// gradient, a small output summed over every pixel of the batch, split.
// Without TMA the forward pass runs the cp.async wgmma kernel; before sm_90
// every pass runs mma.sync.
// CHECK-LABEL: func.func @layer
// CHECK: kiln.fusion "conv"{{.*}}kiln_cuda.kernel = #kiln_cuda.conv<tma, tile = [[TILE:[0-9]+x[0-9]+x64]], stages = {{[2-8]}}, blocks_per_sm = {{[0-9]+}}>
// CHECK: kiln.conv2d
// CHECK: kiln.fusion "conv"{{.*}}kiln_cuda.kernel = #kiln_cuda.conv<wgmma, tile = {{[0-9]+x[0-9]+x64}}, stages = {{[0-9]+}}, blocks_per_sm = {{[0-9]+}}>
// CHECK: kiln.conv2d_backward_input
// CHECK: kiln.fusion "conv"{{.*}}kiln_cuda.kernel = #kiln_cuda.conv<{{.*}}, split = {{[0-9]+}}>
// CHECK: kiln.conv2d_backward_filter
// NOTMA-LABEL: func.func @layer
// NOTMA: kiln_cuda.kernel = #kiln_cuda.conv<wgmma,
// SM80-LABEL: func.func @layer
// SM80-COUNT-3: kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = {{[0-9]+x[0-9]+x[0-9]+}}, warps = {{[0-9]+x[0-9]+}}, stages =
func.func @layer(%x: tensor<32x56x56x64xbf16>, %w: tensor<64x3x3x64xbf16>,
                 %g: tensor<32x56x56x64xbf16>)
    -> (tensor<32x56x56x64xbf16>, tensor<32x56x56x64xbf16>, tensor<64x3x3x64xbf16>) {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<32x56x56x64xbf16>, tensor<64x3x3x64xbf16>
  %dx = kiln.conv2d_backward_input %g, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<32x56x56x64xbf16>, tensor<64x3x3x64xbf16> -> tensor<32x56x56x64xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nhwc padding = [1, 1, 1, 1] : tensor<32x56x56x64xbf16>, tensor<32x56x56x64xbf16> -> tensor<64x3x3x64xbf16>
  return %y, %dx, %dw : tensor<32x56x56x64xbf16>, tensor<32x56x56x64xbf16>, tensor<64x3x3x64xbf16>
}

// Three input channels (a stem): no 16-byte runs to copy, mma.sync.
// CHECK-LABEL: func.func @stem
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<mma, tile = {{[0-9]+x[0-9]+x[0-9]+}}, warps = {{[0-9]+x[0-9]+}}, stages = {{[0-9]+}}, blocks_per_sm = {{[0-9]+}}>
func.func @stem(%x: tensor<8x224x224x3xbf16>, %w: tensor<64x7x7x3xbf16>)
    -> tensor<8x112x112x64xbf16> {
  %y = kiln.conv2d %x, %w layout = nhwc stride = [2, 2] padding = [3, 3, 3, 3] : tensor<8x224x224x3xbf16>, tensor<64x7x7x3xbf16>
  return %y : tensor<8x112x112x64xbf16>
}

// f32 on tf32 tensor cores: in three products by default (the tile of the
// three-product table), once with tf32.
// CHECK-LABEL: func.func @exact
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<tf32, tile = 64x64x32, warps = 2x2, stages = 3, blocks_per_sm = 2
// TF32-LABEL: func.func @exact
// TF32: kiln_cuda.kernel = #kiln_cuda.conv<tf32, tile = {{[0-9]+x[0-9]+x32}}, warps = {{[0-9]+x[0-9]+}}, stages = 3
func.func @exact(%x: tensor<8x28x28x128xf32>, %w: tensor<128x3x3x128xf32>)
    -> tensor<8x28x28x128xf32> {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x128xf32>, tensor<128x3x3x128xf32>
  return %y : tensor<8x28x28x128xf32>
}

// Depthwise: the direct kernels, nothing else to choose.
// CHECK-LABEL: func.func @depthwise
// CHECK: kiln.fusion "conv"{{.*}}kiln_cuda.kernel = #kiln_cuda.conv<depthwise>
func.func @depthwise(%x: tensor<2x8x8x16xbf16>, %w: tensor<16x3x3x1xbf16>)
    -> tensor<2x8x8x16xbf16> {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 16 : tensor<2x8x8x16xbf16>, tensor<16x3x3x1xbf16>
  return %y : tensor<2x8x8x16xbf16>
}

// 16-byte runs of bf16 on sm_90: every pass on the wgmma kernels (the
// forward pass on TMA copies), the filter gradient split.
// CHECK-LABEL: func.func @wgmma_passes
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<tma,
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<wgmma,
// CHECK: kiln_cuda.kernel = #kiln_cuda.conv<wgmma, {{.*}}, split = {{[0-9]+}}>
func.func @wgmma_passes(%x: tensor<8x28x28x64xbf16>, %w: tensor<128x3x3x64xbf16>,
                        %g: tensor<8x28x28x128xbf16>)
    -> (tensor<8x28x28x128xbf16>, tensor<8x28x28x64xbf16>, tensor<128x3x3x64xbf16>) {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x64xbf16>, tensor<128x3x3x64xbf16>
  %dx = kiln.conv2d_backward_input %g, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x128xbf16>, tensor<128x3x3x64xbf16> -> tensor<8x28x28x64xbf16>
  %dw = kiln.conv2d_backward_filter %g, %x layout = nhwc padding = [1, 1, 1, 1] : tensor<8x28x28x128xbf16>, tensor<8x28x28x64xbf16> -> tensor<128x3x3x64xbf16>
  return %y, %dx, %dw : tensor<8x28x28x128xbf16>, tensor<8x28x28x64xbf16>, tensor<128x3x3x64xbf16>
}
