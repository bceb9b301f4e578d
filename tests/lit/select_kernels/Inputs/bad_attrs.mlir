module attributes {test.a = #kiln_cuda.gemm<dma, tile = 128x128x64>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, tile = 128x128>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, stages = 4>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, tile = 64x64x32, warps = 2>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, tile = 64x64x32, split = 0>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, tile = 64x64x32, pingpong>} {}
// -----
module attributes {test.a = #kiln_cuda.gemm<mma, tile = 0x64x32>} {}
// -----
module attributes {test.a = #kiln_cuda.conv<simt, tile = 64x64x32>} {}
// -----
module attributes {test.a = #kiln_cuda.conv<mma, tile = 64x64x32, stages = 3, blocks_per_sm = 2>} {}
// -----
module attributes {test.a = #kiln_cuda.conv<wgmma, tile = 64x64x64, warps = 2x2, stages = 4>} {}
// -----
module attributes {test.a = #kiln_cuda.conv<mma, tile = 64x64x32, warps = 2x2x1, stages = 4>} {}
// -----
module attributes {test.a = #kiln_cuda.conv<mma, tile = 64x64x32, warps = 2x2, stages = 4, blocks_per_sm = 0>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<simt, tile = 32, pingpong>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, tile = 32, forward = 128x128x4>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, forward = 128x128x4, dkdv = 128x64x4>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, dq = 128x64x4, dkdv = 128x64x4, pingpong>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, dq = 128x64x4>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, dq = 128x64x4, dkdv = 128x64x4, fused>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, dkdv = 128x64x4, fused, separate_dkdv>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, forward = 128x0x4>} {}
// -----
module attributes {test.a = #kiln_cuda.attention<wgmma, forward = 128x128>} {}
// -----
module attributes {test.a = #kiln_cuda.rnn<block, batch_tile = 16, blocks = 1, splits = 0>} {}
// -----
module attributes {test.a = #kiln_cuda.rnn<block, batch_tile = 16, blocks = 2, splits = 1>} {}
// -----
module attributes {test.a = #kiln_cuda.rnn<warp, batch_tile = 16, blocks = 1>} {}
// -----
module attributes {test.a = #kiln_cuda.reduction<rows, splits = 0>} {}
// -----
module attributes {test.a = #kiln_cuda.reduction<columns, splits = 1025>} {}
// -----
module attributes {test.a = #kiln_cuda.reduction<tiles, splits = 2>} {}
// -----
module attributes {test.a = #kiln_cuda.reduction<rows, width = 4>} {}
