//===- cluster.cuh - thread-block clusters (sm_90) ------------------------===//
//
// Thin wrappers of the cluster instructions: the block's rank in its
// cluster, a barrier of every thread of the cluster (threads that have
// exited count as arrived) that orders shared-memory accesses across its
// blocks, and stores into the shared memory of another block of the
// cluster at the address `map_shared` makes of a local one.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {
namespace cluster {

__device__ __forceinline__ unsigned rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}

// The cluster shared address of local shared address `addr` in block
// `rank` of the cluster.
__device__ __forceinline__ unsigned map_shared(unsigned addr, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(addr), "r"(rank));
  return remote;
}
__device__ __forceinline__ void store_shared(unsigned remote, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;\n" ::"r"(remote), "f"(v)
               : "memory");
}
__device__ __forceinline__ void store_shared(unsigned remote,
                                             unsigned short bits) {
  asm volatile("st.shared::cluster.b16 [%0], %1;\n" ::"r"(remote), "h"(bits)
               : "memory");
}

} // namespace cluster
} // namespace kiln
