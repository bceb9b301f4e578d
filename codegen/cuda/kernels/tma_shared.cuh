//===- tma_shared.cuh - a TMA kernel's stages in shared memory ------------===//
//
// Where the stages, the epilogue's staging and the stage barriers of a
// warp-specialised TMA kernel (gemm_tma.cuh, conv_tma.cuh) lie in the
// block's shared memory, by the layout the planner sizes the launch by.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_layout.cuh"

namespace kiln {

// The block's shared memory from `base` (1024-byte aligned) on, laid out
// by Roles::smem() (a gemm_layout.cuh wgmma_tma_smem): shared addresses
// of the stages' tiles and barriers and of the epilogue's staging, each
// region's start computed once.
template <class Roles> struct tma_shared {
  // A function rather than a static member, which NVCC would emit as a
  // global of the PTX.
  static __device__ __forceinline__ constexpr gemm::wgmma_tma_smem layout() {
    return Roles::smem();
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
  __device__ __forceinline__ unsigned staging(int unit) const {
    return staging0 + unit * layout().staging_unit;
  }
  __device__ __forceinline__ unsigned full(int stage) const {
    return bars + 8u * stage;
  }
  __device__ __forceinline__ unsigned empty(int stage) const {
    return bars + 8u * (layout().stages + stage);
  }
};

} // namespace kiln
