// A forward convolution into a training batch norm is one fusion: on sm_90
// the wgmma kernel takes the batch statistics of every tile it stores (900
// pixels: 8 tiles of 128 rows), so batch norm only combines the partials and
// normalises; the backward op takes its statistics with its gradient sums in
// one pass. On sm_80 (mma.sync) batch norm reads the result for its
// statistics, inside the same fusion.
// RUN: kilnc %s --train=adamw --precision=bf16 -o %t.kiln --stats 2>&1 | FileCheck %s
// RUN: kilnc %s --train=adamw --precision=bf16 --arch=sm_80 -o %t.sm80.kiln --stats 2>&1 | FileCheck %s --check-prefix=SM80

// CHECK: (sm_90a): conv_wgmma [forward nhwc bf16 gemm 900x64x144 {{.*}} batch-norm statistics in the epilogue]
// CHECK-NEXT: bn_stats_final [outer=900 c=64 inner=1 {{.*}} splits=8 vector=8]
// CHECK-LABEL: entry train_step:
// CHECK-NEXT: {{^  }}kiln_batch_norm_backward_input 1, kiln_batch_norm_backward_params 1, kiln_batch_norm_backward_sums 1, kiln_batch_norm_final 1, kiln_batch_norm_normalize 1, kiln_conv 3,

// SM80-NOT: batch-norm statistics in the epilogue
// SM80-LABEL: entry train_step:
// SM80-NEXT: kiln_batch_norm_normalize 1, kiln_batch_norm_stats 1, kiln_conv 3,

func.func @loss(
    %x: tensor<4x15x15x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %w: tensor<64x3x3x16xf32> {kiln.param = #kiln.init<normal, std = 0.2>, kiln.name = "w"},
    %g: tensor<64xf32> {kiln.param = #kiln.init<ones>, kiln.name = "g"},
    %b: tensor<64xf32> {kiln.param = #kiln.init<zeros>, kiln.name = "b"},
    %t: tensor<4x15x15x64xf32> {kiln.name = "t"}) -> tensor<f32> {
  %c = kiln.conv2d %x, %w layout = nhwc padding = [1, 1, 1, 1] : tensor<4x15x15x16xf32>, tensor<64x3x3x16xf32>
  %y, %m, %v = kiln.batch_norm %c, %g, %b dim = 3 : tensor<4x15x15x64xf32>, tensor<64xf32>, tensor<64xf32>
  %r = kiln.relu %y : tensor<4x15x15x64xf32>
  %loss = kiln.mse_loss %r, %t reduction = mean : tensor<4x15x15x64xf32>
  return %loss : tensor<f32>
}
