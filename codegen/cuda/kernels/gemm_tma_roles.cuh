//===- gemm_tma_roles.cuh - the TMA GEMM's block and shared memory --------===//
//
// The roles of a gemm_tma.cuh block for a configuration (consumer
// warpgroups, the tile slices each multiplies, the readers of a stage) and
// the layout of its shared memory: gemm_layout.cuh's wgmma_tma_smem, which
// the planner sizes the launch by (GemmKernelSpec.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_layout.cuh"
#include "kiln/tma_shared.cuh"

namespace kiln {
namespace gemm {

// The shape of the kernel's block for a configuration: consumer
// warpgroups, the 64-row slices of a tile each multiplies, the warpgroups
// that read (and free) each stage, and the shared memory they share.
// Enumerators rather than static members, which NVRTC would emit as
// globals of the PTX.
template <class Cfg> struct tma_roles {
  enum : int {
    CONSUMERS = Cfg::PINGPONG ? 2 : Cfg::BM / 64,
    SLICES = Cfg::PINGPONG ? Cfg::BM / 64 : 1,
    READERS = Cfg::PINGPONG ? 1 : CONSUMERS,
    ACC = Cfg::BN / 2,
    PROBLEMS = Cfg::GROUPS * Cfg::KSUMS
  };
  static __host__ __device__ constexpr wgmma_tma_smem smem() {
    return tma_smem(Cfg::BM, Cfg::BN, Cfg::STAGES,
                    Cfg::STAGED_EPILOGUE ? CONSUMERS * 4 : 0);
  }
};

// The block's shared memory, laid out by tma_roles::smem().
template <class Cfg> using tma_memory = tma_shared<tma_roles<Cfg>>;

} // namespace gemm
} // namespace kiln
