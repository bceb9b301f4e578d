//===- wgmma.cuh - warpgroup MMA instructions (sm_90a) --------------------===//
//
// Thin wrappers of Hopper's asynchronous warpgroup MMA and nothing else:
// the fence that orders register and shared-memory accesses before a
// product, the commit of the products issued since the last one as a
// group, the wait until at most N groups are in flight, the m64 x N x k16
// products themselves (both operands from shared memory by descriptor, or
// A from registers) and the compiler fences that keep accumulator and
// fragment registers in place while a product writes or reads them behind
// the compiler's back. The matrix descriptors are arithmetic
// (gemm_layout.cuh); the pipelines are the kernels'.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {
namespace wgmma {

// Orders this warpgroup's earlier register and shared-memory accesses
// before the products issued after it.
__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Closes the products issued since the last commit into one group.
__device__ __forceinline__ void commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N of this warpgroup's groups are in flight.
template <int N> __device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// One m64 x BN x k16 wgmma: acc += A (descriptor a) * B (descriptor b), bf16
// (KIND 0) or f16 (KIND 1) operands, A / B M- / N-major when A_MN / B_MN
// (the transpose bits).
template <int BN, int KIND, bool A_MN, bool B_MN>
__device__ __forceinline__ void mma(float (&acc)[BN / 2], unsigned long long a,
                                    unsigned long long b) {
  static_assert((BN == 256 || BN == 128 || BN == 64) && (KIND == 0 || KIND == 1),
                "wgmma tiles are 64 x 64, 64 x 128 or 64 x 256 of bf16 or f16");
  // scale-d (accumulate), scale-a, scale-b, transpose-a, transpose-b.
  if constexpr (BN == 256 && KIND == 0) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
                 "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
                 "%58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
                 "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "
                 "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, "
                 "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "
                 "%124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]),
                   "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]),
                   "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]),
                   "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]),
                   "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]),
                   "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
                   "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]),
                   "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]),
                   "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]),
                   "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]),
                   "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]),
                   "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]),
                   "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]),
                   "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]),
                   "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]),
                   "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]),
                   "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]),
                   "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]),
                   "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]),
                   "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]),
                   "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  } else if constexpr (BN == 256 && KIND == 1) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
                 "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
                 "%58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, "
                 "%72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "
                 "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, "
                 "%100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "
                 "%124, %125, %126, %127"
                 "}, %128, %129, p, 1, 1, %131, %132;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]),
                   "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]),
                   "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]),
                   "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]),
                   "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]),
                   "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
                   "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63]), "+f"(acc[64]),
                   "+f"(acc[65]), "+f"(acc[66]), "+f"(acc[67]), "+f"(acc[68]), "+f"(acc[69]),
                   "+f"(acc[70]), "+f"(acc[71]), "+f"(acc[72]), "+f"(acc[73]), "+f"(acc[74]),
                   "+f"(acc[75]), "+f"(acc[76]), "+f"(acc[77]), "+f"(acc[78]), "+f"(acc[79]),
                   "+f"(acc[80]), "+f"(acc[81]), "+f"(acc[82]), "+f"(acc[83]), "+f"(acc[84]),
                   "+f"(acc[85]), "+f"(acc[86]), "+f"(acc[87]), "+f"(acc[88]), "+f"(acc[89]),
                   "+f"(acc[90]), "+f"(acc[91]), "+f"(acc[92]), "+f"(acc[93]), "+f"(acc[94]),
                   "+f"(acc[95]), "+f"(acc[96]), "+f"(acc[97]), "+f"(acc[98]), "+f"(acc[99]),
                   "+f"(acc[100]), "+f"(acc[101]), "+f"(acc[102]), "+f"(acc[103]),
                   "+f"(acc[104]), "+f"(acc[105]), "+f"(acc[106]), "+f"(acc[107]),
                   "+f"(acc[108]), "+f"(acc[109]), "+f"(acc[110]), "+f"(acc[111]),
                   "+f"(acc[112]), "+f"(acc[113]), "+f"(acc[114]), "+f"(acc[115]),
                   "+f"(acc[116]), "+f"(acc[117]), "+f"(acc[118]), "+f"(acc[119]),
                   "+f"(acc[120]), "+f"(acc[121]), "+f"(acc[122]), "+f"(acc[123]),
                   "+f"(acc[124]), "+f"(acc[125]), "+f"(acc[126]), "+f"(acc[127])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  } else if constexpr (BN == 128 && KIND == 0) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
                 "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
                 "%58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1, %67, %68;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]),
                   "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]),
                   "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]),
                   "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]),
                   "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]),
                   "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
                   "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  } else if constexpr (BN == 128 && KIND == 1) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
                 "%30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "
                 "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, "
                 "%58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1, %67, %68;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31]), "+f"(acc[32]), "+f"(acc[33]), "+f"(acc[34]),
                   "+f"(acc[35]), "+f"(acc[36]), "+f"(acc[37]), "+f"(acc[38]), "+f"(acc[39]),
                   "+f"(acc[40]), "+f"(acc[41]), "+f"(acc[42]), "+f"(acc[43]), "+f"(acc[44]),
                   "+f"(acc[45]), "+f"(acc[46]), "+f"(acc[47]), "+f"(acc[48]), "+f"(acc[49]),
                   "+f"(acc[50]), "+f"(acc[51]), "+f"(acc[52]), "+f"(acc[53]), "+f"(acc[54]),
                   "+f"(acc[55]), "+f"(acc[56]), "+f"(acc[57]), "+f"(acc[58]), "+f"(acc[59]),
                   "+f"(acc[60]), "+f"(acc[61]), "+f"(acc[62]), "+f"(acc[63])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  } else if constexpr (BN == 64 && KIND == 0) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
                 "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "
                 "%28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, %35, %36;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  } else if constexpr (BN == 64 && KIND == 1) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, "
                 "%14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "
                 "%28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, %35, %36;\n}\n"
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]),
                   "+f"(acc[5]), "+f"(acc[6]), "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]),
                   "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]), "+f"(acc[14]),
                   "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
                   "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]),
                   "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]),
                   "+f"(acc[30]), "+f"(acc[31])
                 : "l"(a), "l"(b), "r"(1), "n"(A_MN ? 1 : 0), "n"(B_MN ? 1 : 0));
  }
}

// acc (m64 x N, N = 64 PANELS, one PANELS x 32 accumulator array) +=
// A (registers a) * B (descriptor b), bf16 (mma_rs_bf16) or f16; B is
// read N-major (transposed) when B_MN.
#define KILN_DEFINE_WGMMA_RS(NAME, KILN_TYPE)                                  \
  template <int PANELS, bool B_MN>                                             \
  __device__ __forceinline__ void NAME(                                        \
      float(&acc)[PANELS][32], const unsigned(&a)[4], unsigned long long b) {  \
    constexpr int N = PANELS * 64;                                             \
    static_assert(N <= 256, "wgmma tiles are at most 256 wide");               \
    if constexpr (N == 64) {                                                   \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                \
                   "wgmma.mma_async.sync.aligned.m64n64k16.f32." KILN_TYPE     \
                   "." KILN_TYPE " {"                                          \
                   "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "   \
                   "%13, %14, %15, "                                           \
                   "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "   \
                   "%27, %28, %29, %30, %31"                                   \
                   "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"          \
                   : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]),        \
                     "+f"(acc[0][3]), "+f"(acc[0][4]), "+f"(acc[0][5]),        \
                     "+f"(acc[0][6]), "+f"(acc[0][7]), "+f"(acc[0][8]),        \
                     "+f"(acc[0][9]), "+f"(acc[0][10]), "+f"(acc[0][11]),      \
                     "+f"(acc[0][12]), "+f"(acc[0][13]), "+f"(acc[0][14]),     \
                     "+f"(acc[0][15]), "+f"(acc[0][16]), "+f"(acc[0][17]),     \
                     "+f"(acc[0][18]), "+f"(acc[0][19]), "+f"(acc[0][20]),     \
                     "+f"(acc[0][21]), "+f"(acc[0][22]), "+f"(acc[0][23]),     \
                     "+f"(acc[0][24]), "+f"(acc[0][25]), "+f"(acc[0][26]),     \
                     "+f"(acc[0][27]), "+f"(acc[0][28]), "+f"(acc[0][29]),     \
                     "+f"(acc[0][30]), "+f"(acc[0][31])                        \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),       \
                     "r"(1), "n"(B_MN ? 1 : 0));                               \
    } else if constexpr (N == 128) {                                           \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                \
                   "wgmma.mma_async.sync.aligned.m64n128k16.f32." KILN_TYPE    \
                   "." KILN_TYPE " {"                                          \
                   "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "   \
                   "%13, %14, %15, "                                           \
                   "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "   \
                   "%27, %28, %29, %30, %31, "                                 \
                   "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "   \
                   "%43, %44, %45, %46, %47, "                                 \
                   "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "   \
                   "%59, %60, %61, %62, %63"                                   \
                   "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"          \
                   : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]),        \
                     "+f"(acc[0][3]), "+f"(acc[0][4]), "+f"(acc[0][5]),        \
                     "+f"(acc[0][6]), "+f"(acc[0][7]), "+f"(acc[0][8]),        \
                     "+f"(acc[0][9]), "+f"(acc[0][10]), "+f"(acc[0][11]),      \
                     "+f"(acc[0][12]), "+f"(acc[0][13]), "+f"(acc[0][14]),     \
                     "+f"(acc[0][15]), "+f"(acc[0][16]), "+f"(acc[0][17]),     \
                     "+f"(acc[0][18]), "+f"(acc[0][19]), "+f"(acc[0][20]),     \
                     "+f"(acc[0][21]), "+f"(acc[0][22]), "+f"(acc[0][23]),     \
                     "+f"(acc[0][24]), "+f"(acc[0][25]), "+f"(acc[0][26]),     \
                     "+f"(acc[0][27]), "+f"(acc[0][28]), "+f"(acc[0][29]),     \
                     "+f"(acc[0][30]), "+f"(acc[0][31]), "+f"(acc[1][0]),      \
                     "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3]),        \
                     "+f"(acc[1][4]), "+f"(acc[1][5]), "+f"(acc[1][6]),        \
                     "+f"(acc[1][7]), "+f"(acc[1][8]), "+f"(acc[1][9]),        \
                     "+f"(acc[1][10]), "+f"(acc[1][11]), "+f"(acc[1][12]),     \
                     "+f"(acc[1][13]), "+f"(acc[1][14]), "+f"(acc[1][15]),     \
                     "+f"(acc[1][16]), "+f"(acc[1][17]), "+f"(acc[1][18]),     \
                     "+f"(acc[1][19]), "+f"(acc[1][20]), "+f"(acc[1][21]),     \
                     "+f"(acc[1][22]), "+f"(acc[1][23]), "+f"(acc[1][24]),     \
                     "+f"(acc[1][25]), "+f"(acc[1][26]), "+f"(acc[1][27]),     \
                     "+f"(acc[1][28]), "+f"(acc[1][29]), "+f"(acc[1][30]),     \
                     "+f"(acc[1][31])                                          \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),       \
                     "r"(1), "n"(B_MN ? 1 : 0));                               \
    } else if constexpr (N == 192) {                                           \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"               \
                   "wgmma.mma_async.sync.aligned.m64n192k16.f32." KILN_TYPE    \
                   "." KILN_TYPE " {"                                          \
                   "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "   \
                   "%13, %14, %15, "                                           \
                   "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "   \
                   "%27, %28, %29, %30, %31, "                                 \
                   "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "   \
                   "%43, %44, %45, %46, %47, "                                 \
                   "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "   \
                   "%59, %60, %61, %62, %63, "                                 \
                   "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, "   \
                   "%75, %76, %77, %78, %79, "                                 \
                   "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, "   \
                   "%91, %92, %93, %94, %95"                                   \
                   "}, {%96, %97, %98, %99}, %100, p, 1, 1, %102;\n}\n"        \
                   : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]),        \
                     "+f"(acc[0][3]), "+f"(acc[0][4]), "+f"(acc[0][5]),        \
                     "+f"(acc[0][6]), "+f"(acc[0][7]), "+f"(acc[0][8]),        \
                     "+f"(acc[0][9]), "+f"(acc[0][10]), "+f"(acc[0][11]),      \
                     "+f"(acc[0][12]), "+f"(acc[0][13]), "+f"(acc[0][14]),     \
                     "+f"(acc[0][15]), "+f"(acc[0][16]), "+f"(acc[0][17]),     \
                     "+f"(acc[0][18]), "+f"(acc[0][19]), "+f"(acc[0][20]),     \
                     "+f"(acc[0][21]), "+f"(acc[0][22]), "+f"(acc[0][23]),     \
                     "+f"(acc[0][24]), "+f"(acc[0][25]), "+f"(acc[0][26]),     \
                     "+f"(acc[0][27]), "+f"(acc[0][28]), "+f"(acc[0][29]),     \
                     "+f"(acc[0][30]), "+f"(acc[0][31]), "+f"(acc[1][0]),      \
                     "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3]),        \
                     "+f"(acc[1][4]), "+f"(acc[1][5]), "+f"(acc[1][6]),        \
                     "+f"(acc[1][7]), "+f"(acc[1][8]), "+f"(acc[1][9]),        \
                     "+f"(acc[1][10]), "+f"(acc[1][11]), "+f"(acc[1][12]),     \
                     "+f"(acc[1][13]), "+f"(acc[1][14]), "+f"(acc[1][15]),     \
                     "+f"(acc[1][16]), "+f"(acc[1][17]), "+f"(acc[1][18]),     \
                     "+f"(acc[1][19]), "+f"(acc[1][20]), "+f"(acc[1][21]),     \
                     "+f"(acc[1][22]), "+f"(acc[1][23]), "+f"(acc[1][24]),     \
                     "+f"(acc[1][25]), "+f"(acc[1][26]), "+f"(acc[1][27]),     \
                     "+f"(acc[1][28]), "+f"(acc[1][29]), "+f"(acc[1][30]),     \
                     "+f"(acc[1][31]), "+f"(acc[2][0]), "+f"(acc[2][1]),       \
                     "+f"(acc[2][2]), "+f"(acc[2][3]), "+f"(acc[2][4]),        \
                     "+f"(acc[2][5]), "+f"(acc[2][6]), "+f"(acc[2][7]),        \
                     "+f"(acc[2][8]), "+f"(acc[2][9]), "+f"(acc[2][10]),       \
                     "+f"(acc[2][11]), "+f"(acc[2][12]), "+f"(acc[2][13]),     \
                     "+f"(acc[2][14]), "+f"(acc[2][15]), "+f"(acc[2][16]),     \
                     "+f"(acc[2][17]), "+f"(acc[2][18]), "+f"(acc[2][19]),     \
                     "+f"(acc[2][20]), "+f"(acc[2][21]), "+f"(acc[2][22]),     \
                     "+f"(acc[2][23]), "+f"(acc[2][24]), "+f"(acc[2][25]),     \
                     "+f"(acc[2][26]), "+f"(acc[2][27]), "+f"(acc[2][28]),     \
                     "+f"(acc[2][29]), "+f"(acc[2][30]), "+f"(acc[2][31])      \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),       \
                     "r"(1), "n"(B_MN ? 1 : 0));                               \
    } else if constexpr (N == 256) {                                           \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"               \
                   "wgmma.mma_async.sync.aligned.m64n256k16.f32." KILN_TYPE    \
                   "." KILN_TYPE " {"                                          \
                   "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, "   \
                   "%13, %14, %15, "                                           \
                   "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "   \
                   "%27, %28, %29, %30, %31, "                                 \
                   "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "   \
                   "%43, %44, %45, %46, %47, "                                 \
                   "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, "   \
                   "%59, %60, %61, %62, %63, "                                 \
                   "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, "   \
                   "%75, %76, %77, %78, %79, "                                 \
                   "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, "   \
                   "%91, %92, %93, %94, %95, "                                 \
                   "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, "  \
                   "%106, %107, %108, %109, %110, %111, "                      \
                   "%112, %113, %114, %115, %116, %117, %118, %119, %120, "    \
                   "%121, %122, %123, %124, %125, %126, %127"                  \
                   "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"    \
                   : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]),        \
                     "+f"(acc[0][3]), "+f"(acc[0][4]), "+f"(acc[0][5]),        \
                     "+f"(acc[0][6]), "+f"(acc[0][7]), "+f"(acc[0][8]),        \
                     "+f"(acc[0][9]), "+f"(acc[0][10]), "+f"(acc[0][11]),      \
                     "+f"(acc[0][12]), "+f"(acc[0][13]), "+f"(acc[0][14]),     \
                     "+f"(acc[0][15]), "+f"(acc[0][16]), "+f"(acc[0][17]),     \
                     "+f"(acc[0][18]), "+f"(acc[0][19]), "+f"(acc[0][20]),     \
                     "+f"(acc[0][21]), "+f"(acc[0][22]), "+f"(acc[0][23]),     \
                     "+f"(acc[0][24]), "+f"(acc[0][25]), "+f"(acc[0][26]),     \
                     "+f"(acc[0][27]), "+f"(acc[0][28]), "+f"(acc[0][29]),     \
                     "+f"(acc[0][30]), "+f"(acc[0][31]), "+f"(acc[1][0]),      \
                     "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3]),        \
                     "+f"(acc[1][4]), "+f"(acc[1][5]), "+f"(acc[1][6]),        \
                     "+f"(acc[1][7]), "+f"(acc[1][8]), "+f"(acc[1][9]),        \
                     "+f"(acc[1][10]), "+f"(acc[1][11]), "+f"(acc[1][12]),     \
                     "+f"(acc[1][13]), "+f"(acc[1][14]), "+f"(acc[1][15]),     \
                     "+f"(acc[1][16]), "+f"(acc[1][17]), "+f"(acc[1][18]),     \
                     "+f"(acc[1][19]), "+f"(acc[1][20]), "+f"(acc[1][21]),     \
                     "+f"(acc[1][22]), "+f"(acc[1][23]), "+f"(acc[1][24]),     \
                     "+f"(acc[1][25]), "+f"(acc[1][26]), "+f"(acc[1][27]),     \
                     "+f"(acc[1][28]), "+f"(acc[1][29]), "+f"(acc[1][30]),     \
                     "+f"(acc[1][31]), "+f"(acc[2][0]), "+f"(acc[2][1]),       \
                     "+f"(acc[2][2]), "+f"(acc[2][3]), "+f"(acc[2][4]),        \
                     "+f"(acc[2][5]), "+f"(acc[2][6]), "+f"(acc[2][7]),        \
                     "+f"(acc[2][8]), "+f"(acc[2][9]), "+f"(acc[2][10]),       \
                     "+f"(acc[2][11]), "+f"(acc[2][12]), "+f"(acc[2][13]),     \
                     "+f"(acc[2][14]), "+f"(acc[2][15]), "+f"(acc[2][16]),     \
                     "+f"(acc[2][17]), "+f"(acc[2][18]), "+f"(acc[2][19]),     \
                     "+f"(acc[2][20]), "+f"(acc[2][21]), "+f"(acc[2][22]),     \
                     "+f"(acc[2][23]), "+f"(acc[2][24]), "+f"(acc[2][25]),     \
                     "+f"(acc[2][26]), "+f"(acc[2][27]), "+f"(acc[2][28]),     \
                     "+f"(acc[2][29]), "+f"(acc[2][30]), "+f"(acc[2][31]),     \
                     "+f"(acc[3][0]), "+f"(acc[3][1]), "+f"(acc[3][2]),        \
                     "+f"(acc[3][3]), "+f"(acc[3][4]), "+f"(acc[3][5]),        \
                     "+f"(acc[3][6]), "+f"(acc[3][7]), "+f"(acc[3][8]),        \
                     "+f"(acc[3][9]), "+f"(acc[3][10]), "+f"(acc[3][11]),      \
                     "+f"(acc[3][12]), "+f"(acc[3][13]), "+f"(acc[3][14]),     \
                     "+f"(acc[3][15]), "+f"(acc[3][16]), "+f"(acc[3][17]),     \
                     "+f"(acc[3][18]), "+f"(acc[3][19]), "+f"(acc[3][20]),     \
                     "+f"(acc[3][21]), "+f"(acc[3][22]), "+f"(acc[3][23]),     \
                     "+f"(acc[3][24]), "+f"(acc[3][25]), "+f"(acc[3][26]),     \
                     "+f"(acc[3][27]), "+f"(acc[3][28]), "+f"(acc[3][29]),     \
                     "+f"(acc[3][30]), "+f"(acc[3][31])                        \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),       \
                     "r"(1), "n"(B_MN ? 1 : 0));                               \
    }                                                                          \
  }
KILN_DEFINE_WGMMA_RS(mma_rs_bf16, "bf16")
KILN_DEFINE_WGMMA_RS(mma_rs_f16, "f16")
#undef KILN_DEFINE_WGMMA_RS

template <int KIND, bool B_MN, int PANELS>
__device__ __forceinline__ void mma_rs(float (&acc)[PANELS][32],
                                       const unsigned (&a)[4],
                                       unsigned long long b) {
  static_assert(KIND == 0 || KIND == 1, "wgmma multiplies bf16 or f16");
  if constexpr (KIND == 0)
    mma_rs_bf16<PANELS, B_MN>(acc, a, b);
  else
    mma_rs_f16<PANELS, B_MN>(acc, a, b);
}

// Keeps the compiler from moving accumulator accesses across the wgmma
// fences and waits (the asynchronous MMA writes them behind its back).
template <int COUNT> __device__ __forceinline__ void fence_accumulators(float (&acc)[COUNT]) {
#pragma unroll
  for (int i = 0; i < COUNT; ++i)
    asm volatile("" : "+f"(acc[i])::"memory");
}

// The same for A fragments in registers that a product reads.
template <int STEPS>
__device__ __forceinline__ void fence_fragments(unsigned (&a)[STEPS][4]) {
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      asm volatile("" : "+r"(a[kk][i])::"memory");
}

} // namespace wgmma
} // namespace kiln
