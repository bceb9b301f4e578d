// Pooling fusions become the kernels of kernels/pool.cuh: --stats names the
// template of each. Max pooling's gradient recomputes the argmax of windows
// that do not overlap (@nhwc) and gathers it from scratch where they do
// (@nchw); with bf16 storage NHWC moves eight channels per thread. (kilnc
// compiles every function: the one --function names trains, the others run
// forward only; their results need names.)
// RUN: kilnc %s --function nchw --train=sgd --no-merge-launches -o %t.nchw.kiln --stats 2>&1 | FileCheck %s --check-prefix=NCHW
// RUN: kilnc %s --function nhwc --train=adamw --precision=bf16 --no-merge-launches -o %t.nhwc.kiln --stats 2>&1 | FileCheck %s --check-prefix=NHWC
// RUN: kilnc %s --function nchw --train=sgd --no-merge-launches --emit=ptx | FileCheck %s --check-prefix=PTX --implicit-check-not=atom.

// NCHW-DAG: max_pool_forward [nchw n=2 c=3 9x11->5x6 kernel=3x3 stride=2x2 pad=1,1 vec=1 blocks=1]
// NCHW-DAG: avg_pool_forward [nchw n=2 c=3 9x11->5x6 kernel=3x3 stride=2x2 pad=1,1 vec=1 include_pad blocks=1]
// NCHW-DAG: max_pool_argmax [nchw
// NCHW-DAG: max_pool_backward_indexed [nchw
// NCHW-DAG: avg_pool_backward [nchw {{.*}} include_pad
// NCHW: entry train_step:
// NCHW-NEXT: kiln_avg_pool2d 1, kiln_avg_pool2d_backward 1, kiln_max_pool2d 1, kiln_max_pool2d_argmax 1, kiln_max_pool2d_backward 1,

// NHWC-DAG: max_pool_forward [nhwc n=2 c=16 8x8->4x4 kernel=2x2 stride=2x2 pad=0,0 vec=8
// NHWC-DAG: avg_pool_forward [nhwc n=2 c=16 8x8->4x4 kernel=2x2 stride=2x2 pad=0,0 vec=8
// NHWC-DAG: max_pool_backward [nhwc
// NHWC-DAG: avg_pool_backward [nhwc
// NHWC-NOT: max_pool_argmax

// The gradients gather: no atomics anywhere.
// PTX-DAG: ===== kiln_max_pool2d_argmax_{{[0-9a-f]+}} =====
// PTX-DAG: ===== kiln_max_pool2d_backward_{{[0-9a-f]+}} =====
// PTX-DAG: ===== kiln_avg_pool2d_backward_{{[0-9a-f]+}} =====
func.func @nchw(
    %x: tensor<2x3x9x11xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x3x5x6xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %m = kiln.max_pool2d %x layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] : tensor<2x3x9x11xf32>
  %a = kiln.avg_pool2d %x layout = nchw kernel = [3, 3] stride = [2, 2] padding = [1, 1, 1, 1] count_include_pad : tensor<2x3x9x11xf32>
  %s = kiln.add %m, %a : tensor<2x3x5x6xf32>, tensor<2x3x5x6xf32>
  %loss = kiln.mse_loss %s, %t reduction = mean : tensor<2x3x5x6xf32>
  return %loss : tensor<f32>
}

func.func @nhwc(
    %x: tensor<2x8x8x16xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "x"},
    %t: tensor<2x4x4x16xf32> {kiln.name = "t"}) -> (tensor<f32> {kiln.name = "loss"}) {
  %m = kiln.max_pool2d %x layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x8x8x16xf32>
  %a = kiln.avg_pool2d %x layout = nhwc kernel = [2, 2] stride = [2, 2] : tensor<2x8x8x16xf32>
  %s = kiln.add %m, %a : tensor<2x4x4x16xf32>, tensor<2x4x4x16xf32>
  %loss = kiln.mse_loss %s, %t reduction = mean : tensor<2x4x4x16xf32>
  return %loss : tensor<f32>
}
