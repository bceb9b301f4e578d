//===- memory.cuh - memory instructions by explicit state space -----------===//
//
// Thin wrappers of the loads and stores a kernel addresses itself rather
// than through C++ pointers: shared memory by its 32-bit shared address
// (the addresses the TMA and wgmma layouts compute), an L2 prefetch of a
// global line, and the release increment and acquire load of a global
// counter that blocks of a grid meet at.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {
namespace mem {

__device__ __forceinline__ void store_shared(unsigned addr, unsigned v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void store_shared(unsigned addr, float v) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}
__device__ __forceinline__ void store_shared(unsigned addr,
                                             const unsigned (&w)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
               : "memory");
}
// Not ordered against other shared-memory accesses by the compiler: for
// values that no other thread writes meanwhile.
__device__ __forceinline__ float load_shared_f32(unsigned addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
  return v;
}
__device__ __forceinline__ void load_shared(unsigned addr, unsigned (&w)[4]) {
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
               : "r"(addr)
               : "memory");
}

// Asks the L2 for the 128-byte line at global address `line`.
__device__ __forceinline__ void prefetch_l2_line(unsigned long long line) {
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(line) : "memory");
}

// Adds one to *counter, releasing this thread's earlier writes at GPU scope.
__device__ __forceinline__ void release_increment(unsigned *counter) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(counter)
               : "memory");
}
// *counter, acquiring the writes released before it at GPU scope.
__device__ __forceinline__ unsigned acquire_load(const unsigned *counter) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n"
               : "=r"(v)
               : "l"(counter)
               : "memory");
  return v;
}

} // namespace mem
} // namespace kiln
