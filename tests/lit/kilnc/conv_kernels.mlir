// Convolutions become the kernels of kernels/conv_igemm.cuh or
// conv_wgmma.cuh (implicit GEMMs) or, depthwise, of
// kernels/conv_depthwise.cuh: --stats names the template
// and the configuration the planner chose. Channels last with multiples of
// 8 channels copies 16-byte runs; channels first gathers element by
// element; f32 multiplies in three tf32 products unless --tf32. The filter
// gradient's long reduction is split across blocks. A ReLU after the
// convolution is its epilogue (no kernel of its own).
// RUN: kilnc %s --function nhwc --train=adamw --precision=bf16 -o %t.nhwc.kiln --stats 2>&1 | FileCheck %s --check-prefix=NHWC
// RUN: kilnc %s --function nchw --train=sgd -o %t.nchw.kiln --stats 2>&1 | FileCheck %s --check-prefix=NCHW
// RUN: kilnc %s --function nchw --train=sgd --tf32 -o %t.tf32.kiln --stats 2>&1 | FileCheck %s --check-prefix=TF32
// RUN: kilnc %s --function depthwise --train=sgd --no-merge-launches -o %t.dw.kiln --stats 2>&1 | FileCheck %s --check-prefix=DW
// RUN: kilnc %s --function nhwc --inference --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: kilnc %s --function wide --train=adamw --precision=bf16 -o %t.wide.kiln --stats 2>&1 | FileCheck %s --check-prefix=WIDE
// RUN: kilnc %s --function wide --train=adamw --precision=bf16 --arch=sm_80 -o %t.wide80.kiln --stats 2>&1 | FileCheck %s --check-prefix=WIDE80
// RUN: kilnc %s --function wide --train=adamw --precision=bf16 --no-tma -o %t.widenotma.kiln --stats 2>&1 | FileCheck %s --check-prefix=NOTMA

// NHWC-DAG: conv_igemm [forward nhwc bf16 gemm 512x32x144 tile {{[0-9]+x[0-9]+x[0-9]+}} mma warps {{.*}} a K-major 16-byte b K-major 16-byte]
// NHWC-DAG: conv_igemm [backward_input nhwc bf16 gemm 512x16x288 {{.*}} a K-major 16-byte b N-major 16-byte]
// NHWC-DAG: conv_igemm [backward_filter nhwc bf16 gemm 32x144x512 {{.*}} a M-major 16-byte b N-major 16-byte]
// NHWC-NOT: kiln_relu

// NCHW-DAG: conv_igemm [forward nchw f32 (3xtf32) gemm 8x162x27 {{.*}} a K-major gathered b N-major gathered]
// NCHW-DAG: conv_igemm [backward_input nchw f32 (3xtf32) gemm 3x162x72 {{.*}} a K-major gathered b N-major gathered]
// NCHW-DAG: conv_igemm [backward_filter nchw f32 (3xtf32) gemm 8x27x162 {{.*}} a K-major gathered b K-major gathered]
// TF32: conv_igemm [forward nchw tf32 gemm 8x162x27

// On sm_90, bf16 passes whose operands are 16-byte runs and fill wgmma
// tiles run kernels/conv_wgmma.cuh (arch-specific sm_90a code), the forward
// pass with 64 channels its operands copied by the TMA (conv_tma.cuh,
// unless --no-tma); sm_80 keeps mma.sync.
// WIDE-DAG: (sm_90a): conv_tma [forward nhwc bf16 gemm 512x64x576 tile {{[0-9]+x[0-9]+x64}} wgmma warpgroups {{[12]}} and a TMA producer stages {{[2-8]}} split 1 a im2col TMA b tiled TMA]
// WIDE-DAG: (sm_90a): conv_wgmma [backward_input nhwc bf16 gemm 512x64x576 tile {{[0-9]+x[0-9]+x64}} wgmma warpgroups
// NOTMA-NOT: conv_tma
// NOTMA: (sm_90a): conv_wgmma [forward nhwc bf16 gemm 512x64x576
// WIDE80-NOT: conv_wgmma
// WIDE80-NOT: conv_tma
// WIDE80: conv_igemm [forward nhwc bf16 gemm 512x64x576

// DW-DAG: conv_depthwise [forward nhwc depthwise float 16 channels 3x3]
// DW-DAG: conv_depthwise [backward_filter nhwc depthwise float 16 channels 3x3]
// DW-DAG: conv_depthwise [backward_input nhwc depthwise float 16 channels 3x3]

// The fused epilogue: the convolution's sum, the bias, then the ReLU.
// CUDA: // kiln conv fusion of
// CUDA: // epilogue: kiln.relu
// CUDA: kiln::conv::igemm<Config, Epilogue>
func.func @nhwc(
    %x: tensor<2x16x16x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<32x3x3x16xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"},
    %b: tensor<32xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %t: tensor<2x16x16x32xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %c = kiln.conv2d %x, %w, %b layout = nhwc padding = [1, 1, 1, 1] : tensor<2x16x16x16xf32>, tensor<32x3x3x16xf32>, tensor<32xf32>
  %y = kiln.relu %c : tensor<2x16x16x32xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x16x16x32xf32>
  return %loss : tensor<f32>
}

func.func @nchw(
    %x: tensor<2x3x9x9xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<8x3x3x3xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"},
    %t: tensor<2x8x9x9xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %y = kiln.conv2d %x, %w layout = nchw padding = [1, 1, 1, 1] : tensor<2x3x9x9xf32>, tensor<8x3x3x3xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x8x9x9xf32>
  return %loss : tensor<f32>
}

func.func @depthwise(
    %x: tensor<2x8x8x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<16x3x3x1xf32> {kiln.param = #kiln.init<normal, std = 0.1>, kiln.name = "w"},
    %t: tensor<2x8x8x16xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] groups = 16 : tensor<2x8x8x16xf32>, tensor<16x3x3x1xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x8x8x16xf32>
  return %loss : tensor<f32>
}

func.func @wide(
    %x: tensor<2x16x16x64xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<64x3x3x64xf32> {kiln.param = #kiln.init<normal, std = 0.05>, kiln.name = "w"},
    %t: tensor<2x16x16x64xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %y = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<2x16x16x64xf32>, tensor<64x3x3x64xf32>
  %loss = kiln.mse_loss %y, %t reduction = mean : tensor<2x16x16x64xf32>
  return %loss : tensor<f32>
}
