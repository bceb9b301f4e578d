//===- mma.cuh - warp-level tensor core instructions (sm_80) --------------===//
//
// Thin wrappers of the warp-synchronous MMA instructions: ldmatrix (four
// 8 x 8 matrices of 16-bit elements from shared memory into the fragments
// of a warp, transposed or not), the round of an f32 to tf32, and the
// m16n8 products mma.sync of bf16, f16 and tf32 fragments into f32
// accumulators. Which lane holds what is the PTX ISA's fragment layout.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {
namespace mma {

template <typename T>
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const T *p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
template <typename T>
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const T *p) {
  const unsigned a = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
template <typename T> __device__ __forceinline__ unsigned to_tf32(T x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"((float)x));
  return r;
}
// c += a b for KIND 0 (bf16 m16n8k16), 1 (f16 m16n8k16), 2 (tf32 m16n8k8).
template <int KIND>
__device__ __forceinline__ void fma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (KIND == 0) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (KIND == 1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

} // namespace mma
} // namespace kiln
