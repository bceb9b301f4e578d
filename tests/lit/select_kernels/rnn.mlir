// The recurrent search's configuration recorded as #kiln_cuda.rnn: batch
// tile, blocks per group (meeting in a cluster on sm_90, in the grid on
// sm_80) and splits of the reduction, forward and backward.
// RUN: kilnc %s --train=sgd --function=loss --emit=cuda -o %t.cu --mlir-print-ir-after=kiln-select-kernels 2>&1 | FileCheck %s --check-prefix=IR
// RUN: kilnc %s --train=sgd --function=loss --emit=mlir -o %t.planned.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels -o %t.auto.mlir
// RUN: FileCheck %s < %t.auto.mlir
// RUN: kiln-opt %t.planned.mlir --kiln-select-kernels=arch=sm_80 | FileCheck %s --check-prefix=SM80
// The recorded choices generate what kilnc does; a forced one is rendered,
// and one the kernels cannot take is an error at the fusion.
// RUN: kilnc %t.auto.mlir --planned --emit=cuda -o %t.auto.cu
// RUN: diff %t.auto.cu %t.cu
// RUN: sed -e '0,/#kiln_cuda.rnn<[^>]*>/s//#kiln_cuda.rnn<cluster, batch_tile = 16, blocks = 2, splits = 2>/' %t.auto.mlir > %t.forced.mlir
// RUN: kilnc %t.forced.mlir --planned --emit=cuda -o %t.forced.cu
// RUN: FileCheck %s --check-prefix=FORCED < %t.forced.cu
// RUN: sed -e 's/#kiln_cuda.rnn<[^>]*>/#kiln_cuda.rnn<cluster, batch_tile = 48, blocks = 2, splits = 2>/' %t.auto.mlir > %t.bad1.mlir
// RUN: not kilnc %t.bad1.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD1
// RUN: sed -e 's/#kiln_cuda.rnn<[^>]*>/#kiln_cuda.rnn<grid, batch_tile = 16, blocks = 31, splits = 1>/' %t.auto.mlir > %t.bad2.mlir
// RUN: not kilnc %t.bad2.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD2
// RUN: sed -e 's/#kiln_cuda.rnn<[^>]*>/#kiln_cuda.rnn<grid, batch_tile = 16, blocks = 2, splits = 2>/' %t.auto.mlir > %t.bad3.mlir
// RUN: not kilnc %t.bad3.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD3
// RUN: sed -e 's/#kiln_cuda.rnn<[^>]*>/#kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>/' %t.auto.mlir > %t.bad4.mlir
// RUN: not kilnc %t.bad4.mlir --planned -o %t.kiln 2>&1 | FileCheck %s --check-prefix=BAD4

// IR: IR Dump After KilnSelectKernels
// IR: kiln.fusion "rnn"{{.*}}kiln_cuda.kernel = #kiln_cuda.rnn<cluster, batch_tile = 16, blocks = 6, splits = 4>

// CHECK: kiln.fusion "rnn"{{.*}}kiln_cuda.kernel = #kiln_cuda.rnn<cluster, batch_tile = 16, blocks = 6, splits = 4>
// CHECK: kiln.fusion "rnn"{{.*}}kiln_cuda.kernel = #kiln_cuda.rnn<cluster, batch_tile = 16, blocks = 6, splits = 4>
// CHECK: kiln.fusion "rnn"{{.*}}kiln_cuda.kernel = #kiln_cuda.rnn<cluster, batch_tile = 16, blocks = 8, splits = 4>

// SM80: #kiln_cuda.rnn<grid, batch_tile = 16, blocks = 11, splits = 8>

// FORCED: ===== kiln_rnn_forward
// FORCED: kiln::rnn::rnn_config<2, __nv_bfloat16, 0, 4LL, 3LL, 1, 256, 16, 128, 2, 2, 1,

// BAD1: error: 'kiln.fusion' op kiln_cuda.kernel: the batch tile is 16, 32 or 64 rows
// BAD2: error: 'kiln.fusion' op kiln_cuda.kernel: 31 blocks do not share 256 units in whole 8-unit columns
// BAD3: error: 'kiln.fusion' op kiln_cuda.kernel: the 2 blocks of a group meet in a cluster on sm_90, not a grid
// BAD4: error: 'kiln.fusion' op kiln_cuda.kernel: an rnn fusion's kernel is a #kiln_cuda.rnn, got #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
func.func @loss(
    %wx: tensor<4x3x1x1x256xbf16> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "wx"},
    %r: tensor<1x1x256x256xbf16> {kiln.param = #kiln.init<normal, std = 0.03>, kiln.name = "r"},
    %b: tensor<1x1x256xbf16> {kiln.param = #kiln.init<zeros>, kiln.name = "b"}) -> tensor<bf16> {
  %s0 = kiln.constant dense<0.0> : tensor<1x4x1x256xbf16>
  %all, %last = kiln.rnn %wx, %r, %b, %s0 function = elman : tensor<4x3x1x1x256xbf16>, tensor<1x1x256x256xbf16>, tensor<1x1x256xbf16>, tensor<1x4x1x256xbf16>
  %loss = kiln.reduce_mean %all dims = [0, 1, 2, 3, 4] : tensor<1x4x3x1x256xbf16>
  return %loss : tensor<bf16>
}
