//===- GemmWgmma.h - the Hopper warpgroup-MMA kernel of gemm fusions -*- C++
//-*-===//
//
// The bf16/f16 GEMM kernel for sm_90a: wgmma.mma_async on 128-byte-swizzled
// shared tiles filled by a cp.async pipeline. GemmEmitter.cpp chooses it per
// problem and puts it after the parts every gemm kernel shares (sizes, tile
// mapping, the fused epilogue); this file holds only what is specific to it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_GEMMWGMMA_H
#define KILN_CODEGEN_CUDA_GEMMWGMMA_H

#include <cstdint>
#include <string>

namespace mlir::kiln::codegen {

/// The reduction depth of one wgmma tile step (one 128-byte swizzle row of
/// bf16/f16).
constexpr int kWgmmaBlockK = 64;

/// Dynamic shared memory of the kernel: `stages` A (bm x 64) and B (bn x 64)
/// tiles plus the slack that aligns them to the 1024-byte swizzle atoms.
uint32_t wgmmaSharedBytes(int bm, int bn, int stages);

/// The kernel source that follows the shared gemm source: the device
/// function issuing one m64 x bn x k16 wgmma (f32 accumulators; `f16`
/// operands, else bf16; A / B M- / N-major when transposed) and the kernel.
std::string wgmmaKernelSource(int bn, bool f16, bool aMnMajor, bool bMnMajor);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_CUDA_GEMMWGMMA_H
