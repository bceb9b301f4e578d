// The kernel attributes print as they parse; omitted fields
// take their defaults (no ping-pong, one block per cluster, one split, no
// TMA store; one block per SM; no persistent attention blocks).
// RUN: kiln-opt %s | FileCheck %s
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: not kiln-opt %S/Inputs/bad_attrs.mlir --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: a = #kiln_cuda.gemm<tma, tile = 128x128x64, stages = 6, pingpong, cluster = 2, split = 3, tma_store>
// CHECK-SAME: b = #kiln_cuda.gemm<simt, tile = 32x32x32>
// CHECK-SAME: c = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>
// CHECK-SAME: d = #kiln_cuda.conv<mma, tile = 128x64x32, warps = 4x2, stages = 3, blocks_per_sm = 2, split = 8>
// CHECK-SAME: e = #kiln_cuda.conv<tma, tile = 128x128x64, stages = 5, blocks_per_sm = 1>
// CHECK-SAME: f = #kiln_cuda.attention<simt, tile = 32>
// CHECK-SAME: g = #kiln_cuda.attention<wgmma, forward = 128x128x4, pingpong, persistent = 132>
// CHECK-SAME: h = #kiln_cuda.attention<wgmma, dq = 128x64x3, dkdv = 64x64x2, separate_dkdv>
// CHECK-SAME: i = #kiln_cuda.attention<wgmma, dkdv = 128x64x2, fused, persistent = 8>
// CHECK-SAME: j = #kiln_cuda.rnn<cluster, batch_tile = 32, blocks = 4, splits = 1>
// CHECK-SAME: k = #kiln_cuda.reduction<columns, splits = 16>
// CHECK-SAME: l = #kiln_cuda.reduction<rows, splits = 1>
func.func @f(%x: tensor<f32>) -> tensor<f32> attributes {
  test.a = #kiln_cuda.gemm<tma, split = 3, tile = 128x128x64, tma_store, cluster = 2, stages = 6, pingpong>,
  test.b = #kiln_cuda.gemm<simt, tile = 32x32x32, stages = 0, split = 1>,
  test.c = #kiln_cuda.gemm<mma, tile = 64x64x32, stages = 4>,
  test.d = #kiln_cuda.conv<mma, split = 8, blocks_per_sm = 2, tile = 128x64x32, stages = 3, warps = 4x2>,
  test.e = #kiln_cuda.conv<tma, tile = 128x128x64, stages = 5>,
  test.f = #kiln_cuda.attention<simt, tile = 32>,
  test.g = #kiln_cuda.attention<wgmma, persistent = 132, pingpong, forward = 128x128x4>,
  test.h = #kiln_cuda.attention<wgmma, separate_dkdv, dkdv = 64x64x2, dq = 128x64x3, persistent = 0>,
  test.i = #kiln_cuda.attention<wgmma, fused, dkdv = 128x64x2, persistent = 8>,
  test.j = #kiln_cuda.rnn<cluster, blocks = 4, batch_tile = 32>,
  test.k = #kiln_cuda.reduction<columns, splits = 16>,
  test.l = #kiln_cuda.reduction<rows>
} {
  return %x : tensor<f32>
}

// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown kernel 'dma' of #kiln_cuda.gemm (expected tma, wgmma, mma, tf32, simt)
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: expected tile = MxNxK
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.gemm needs tile = MxNxK
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown #kiln_cuda.gemm field 'warps' (expected tile stages pingpong cluster split tma_store)
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.gemm needs stages >= 0, cluster >= 1 and split >= 1
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: pingpong, cluster and tma_store are the tma kernel's
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.gemm tile dimensions must be positive
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown kernel 'simt' of #kiln_cuda.conv (expected tma, wgmma, mma, tf32, depthwise)
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: the mma and tf32 kernels' tiles take warps = MxN (positive), the wgmma kernels' none
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: the mma and tf32 kernels' tiles take warps = MxN (positive), the wgmma kernels' none
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: expected warps = MxN
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.conv needs positive stages, blocks_per_sm and split
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the simt kernels take a positive tile and nothing else
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the wgmma kernels take no tile
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: a wgmma attention is a forward (forward = BMxBNxS) or a backward (dkdv = BMxBNxS), not both
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: pingpong is the forward's
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the backward needs dkdv = BMxBNxS
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the backward takes dq = BMxBNxS, or is fused and takes none
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the fused backward has no separate dK and dV launches
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.attention: the wgmma kernels' sizes must be positive, persistent at least 0
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: expected forward = MxNxK
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.rnn needs a positive batch_tile, blocks and splits
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.rnn: one block per group meets alone (block), more in a cluster or grid
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown kernel 'warp' of #kiln_cuda.rnn (expected block, cluster, grid)
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.reduction splits the reduced range over 1 to 1024 blocks
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: #kiln_cuda.reduction splits the reduced range over 1 to 1024 blocks
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown kernel 'tiles' of #kiln_cuda.reduction (expected rows, columns)
// BAD: bad_attrs.mlir:{{[0-9]+ offset :[0-9]+:[0-9]+}}: error: unknown #kiln_cuda.reduction field 'width' (expected splits)
