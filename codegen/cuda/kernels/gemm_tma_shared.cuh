//===- gemm_tma_shared.cuh - the TMA GEMM's block and shared memory -------===//
//
// The roles of a gemm_tma.cuh block for a configuration (consumer
// warpgroups, the tile slices each multiplies, the readers of a stage) and
// its shared memory: gemm_layout.cuh's wgmma_tma_smem, which the planner
// sizes the launch by (GemmKernelSpec.cpp), at the block's aligned base.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_layout.cuh"

namespace kiln {
namespace gemm {

// The shape of the kernel's block for a configuration: consumer
// warpgroups, the 64-row slices of a tile each multiplies, the warpgroups
// that read (and free) each stage, and the shared memory they share.
template <class Cfg> struct tma_roles {
  static constexpr int CONSUMERS = Cfg::PINGPONG ? 2 : Cfg::BM / 64;
  static constexpr int SLICES = Cfg::PINGPONG ? Cfg::BM / 64 : 1;
  static constexpr int READERS = Cfg::PINGPONG ? 1 : CONSUMERS;
  static constexpr int ACC = Cfg::BN / 2;
  static constexpr int PROBLEMS = Cfg::GROUPS * Cfg::KSUMS;
  static __host__ __device__ constexpr wgmma_tma_smem smem() {
    return wgmma_tma_smem(Cfg::BM, Cfg::BN, Cfg::STAGES,
                          Cfg::STAGED_EPILOGUE ? CONSUMERS * 4 : 0);
  }
};

// The block's shared memory from `base` (1024-byte aligned) on, laid out
// by tma_roles::smem(): shared addresses of the stages' tiles and barriers
// and of the warps' staging, each region's start computed once.
template <class Cfg> struct tma_shared {
  // A function rather than a static member, which NVCC would emit as a
  // global of the PTX.
  static __device__ __forceinline__ constexpr wgmma_tma_smem layout() {
    return tma_roles<Cfg>::smem();
  }
  unsigned a0, b0, staging0, bars;

  __device__ __forceinline__ explicit tma_shared(unsigned base)
      : a0(base), b0(base + layout().b(0)),
        staging0(base + layout().staging(0)), bars(base + layout().full(0)) {}
  __device__ __forceinline__ unsigned a(int stage) const {
    return a0 + stage * layout().a_tile;
  }
  __device__ __forceinline__ unsigned b(int stage) const {
    return b0 + stage * layout().b_tile;
  }
  __device__ __forceinline__ unsigned staging(int warp) const {
    return staging0 + warp * layout().staging_warp;
  }
  __device__ __forceinline__ unsigned full(int stage) const {
    return bars + 8u * stage;
  }
  __device__ __forceinline__ unsigned empty(int stage) const {
    return bars + 8u * (Cfg::STAGES + stage);
  }
};

} // namespace gemm
} // namespace kiln
