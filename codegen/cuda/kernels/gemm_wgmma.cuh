//===- gemm_wgmma.cuh - bf16/f16 GEMM on Hopper warpgroup MMA (sm_90a) ----===//
//
// wgmma.mma_async on 128-byte-swizzled shared tiles (gemm_layout.cuh) filled
// by a cp.async pipeline; BM / 64 warpgroups of 64 x BN. It copies whole
// 16-byte chunks of both operands only (Cfg::A_VEC and B_VEC), runs one
// problem (GROUPS == KSUMS == 1), and is compiled for sm_90a, so its code
// runs on sm_90 devices only.
// Pipeline. STAGES shared stages, STAGES - 2 tiles copied ahead of the one
// multiplied, one wgmma group in flight while the next is issued. Each
// iteration: wait for the current tile's copies, fence them into the async
// proxy (wgmma reads through it), barrier, issue the tile's four k16 wgmmas,
// refill the stage read two iterations ago (every warpgroup waited for that
// group before the barrier), and wait for the previous group.
// Grid. Persistent: one block per SM walks the work items (tile, batch, K
// split); the copies of an item's first tiles are issued before the previous
// item's epilogue, which then hides their latency. Tiles wholly inside the
// output take an epilogue without bounds tests.
// Accumulators. Warpgroup w computes rows [64w, 64w + 64) of the tile; in it
// warp v, lane (g = lane / 4, q = lane % 4) holds rows 16v + g and 16v + g + 8
// of every 8-column block j at columns 8j + 2q, 8j + 2q + 1: registers
// 4j + {0, 1} and 4j + {2, 3} (the mma.sync m16n8 layout, repeated along N).
//
// Cfg (gemm_common.cuh) adds STAGES; BK is wgmma_block_k. The block is
// BM / 64 * 128 threads, one block per SM.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/gemm_common.cuh"

namespace kiln {
namespace gemm {

// One m64 x BN x k16 wgmma: acc += A (descriptor a) * B (descriptor b), bf16
// (KIND 0) or f16 (KIND 1) operands, A / B M- / N-major when A_MN / B_MN
// (the transpose bits).
template <int BN, int KIND, bool A_MN, bool B_MN>
__device__ __forceinline__ void wgmma(float (&acc)[BN / 2], unsigned long long a,
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

// One thread's share of the copies of an operand tile from a GROWS x GCOLS
// matrix (rows M/N when K-major, else K): COUNT 16-byte chunks, STEP tile
// rows apart (a multiple of 8, so every chunk has the first one's swizzle
// and its shared offset is the first one's plus a constant). Chunks outside
// the matrix are zero-filled; the tests exist only where a tile can reach
// past the matrix.
template <class Cfg, int MN, bool KMAJOR, typename Cfg::index GROWS, typename Cfg::index GCOLS>
struct wgmma_tile_copy {
  typedef typename Cfg::index idx;
  typedef typename Cfg::element T;
  static constexpr int THREADS = Cfg::BM / 64 * 128;
  static constexpr int PER_ROW = (KMAJOR ? Cfg::BK : MN) / 8;
  static constexpr int STEP = THREADS / PER_ROW;
  static constexpr int COUNT = MN * Cfg::BK / 8 / THREADS;
  static constexpr bool ROW_TAIL = GROWS % (KMAJOR ? MN : Cfg::BK) != 0;
  static constexpr bool COL_TAIL = GCOLS % (KMAJOR ? Cfg::BK : MN) != 0;
  static_assert(THREADS % PER_ROW == 0 && STEP % 8 == 0 && COUNT * THREADS * 8 == MN * Cfg::BK,
                "chunks must divide among threads in whole swizzle rows");
  int row, col;
  unsigned offset;
  __device__ __forceinline__ explicit wgmma_tile_copy(int tid)
      : row(tid / PER_ROW), col(tid % PER_ROW),
        offset(KMAJOR ? wgmma_swizzle_k(tid / PER_ROW, tid % PER_ROW)
                      : wgmma_swizzle_mn(tid / PER_ROW, tid % PER_ROW)) {}
  // The tile at M/N offset mn0, K offset k0 into the shared tile at s.
  __device__ __forceinline__ void operator()(unsigned s, const T *__restrict__ g, idx mn0,
                                             idx k0) const {
    const idx r0 = (KMAJOR ? mn0 : k0) + row, c0 = (KMAJOR ? k0 : mn0) + col * 8;
    const T *src = g + r0 * GCOLS + c0;
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
      const bool valid = (!COL_TAIL || c0 < GCOLS) && (!ROW_TAIL || r0 + i * STEP < GROWS);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                       s + offset + i * STEP * 128),
                   "l"(valid ? src + i * STEP * GCOLS : g), "r"(valid ? 16 : 0));
    }
  }
};

// Keeps the compiler from moving accumulator accesses across the wgmma
// fences and waits (the asynchronous MMA writes them behind its back).
template <int COUNT> __device__ __forceinline__ void fence_accumulators(float (&acc)[COUNT]) {
#pragma unroll
  for (int i = 0; i < COUNT; ++i)
    asm volatile("" : "+f"(acc[i])::"memory");
}

// A unit of work: one output tile of one GEMM batch and K split.
template <class Cfg> struct wgmma_work {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  // Every (tile, batch, split).
  static constexpr long long COUNT =
      (long long)Cfg::GEMM_BATCH * Cfg::SPLIT * S::TILES_M * S::TILES_N;

  const typename Cfg::element *a, *b;
  idx batch, m0, n0;
  int split, ktBegin, nk;

  template <class Ops, class Params>
  static __device__ __forceinline__ wgmma_work at(const Params &p, long long w) {
    wgmma_work x;
    const long long z = w / (S::TILES_M * S::TILES_N);
    idx tm, tn;
    tile_of<Cfg>((idx)(w % (S::TILES_M * S::TILES_N)), tm, tn);
    x.batch = (idx)(z / Cfg::SPLIT);
    x.split = (int)(z % Cfg::SPLIT);
    x.m0 = tm * Cfg::BM;
    x.n0 = tn * Cfg::BN;
    x.a = Ops::lhs(p, x.batch);
    x.b = Ops::rhs(p, x.batch);
    x.ktBegin = x.split * Cfg::KT_PER_SPLIT;
    const int ktEnd =
        S::KT < x.ktBegin + Cfg::KT_PER_SPLIT ? S::KT : x.ktBegin + Cfg::KT_PER_SPLIT;
    x.nk = ktEnd > x.ktBegin ? ktEnd - x.ktBegin : 0;
    return x;
  }
};

// Warpgroup wg's accumulators (rows m0 + 64 wg .. + 63 of the tile at
// (m0, n0) of GEMM batch b) through the epilogue; `thread` is the thread's
// index in its warpgroup.
template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void
wgmma_epilogue(const Params &p, int split, typename Cfg::index b,
               typename Cfg::index m0, typename Cfg::index n0, int wg,
               int thread, const float (&acc)[Cfg::BN / 2]) {
  typedef typename Cfg::index idx;
  // Every tile lies inside the output: the epilogue needs no bounds tests.
  constexpr bool EVEN_TILES = Cfg::ROWS % Cfg::BM == 0 && Cfg::N % Cfg::BN == 0;
  const int lane = thread & 31, warp = thread >> 5, g = lane >> 2, q = lane & 3;
  const idx row = m0 + wg * 64 + warp * 16 + g;
  const idx r = b * Cfg::ROWS + row;
  if (EVEN_TILES || (m0 + Cfg::BM <= Cfg::ROWS && n0 + Cfg::BN <= Cfg::N)) {
    // One block of independent pairs; a column's epilogue operands serve
    // both rows.
#pragma unroll
    for (int j = 0; j < Cfg::BN / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half)
        emit_pair<Cfg, Epi, true>(p, split, r + half * 8, n0 + j * 8 + q * 2,
                                  acc[j * 4 + half * 2],
                                  acc[j * 4 + half * 2 + 1]);
  } else {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      if (row + half * 8 >= Cfg::ROWS)
        continue;
#pragma unroll
      for (int j = 0; j < Cfg::BN / 8; ++j)
        emit_pair<Cfg, Epi>(p, split, r + half * 8, n0 + j * 8 + q * 2,
                            acc[j * 4 + half * 2], acc[j * 4 + half * 2 + 1]);
    }
  }
}

// Persistent: block i takes work items i, i + grid.x, ...; the first tiles
// of the next item are copied while this item's epilogue runs.
template <class Cfg, class Ops, class Epi, class Params>
__device__ __forceinline__ void wgmma_gemm(const launch_ctx &ctx, const Params &p) {
  typedef typename Cfg::index idx;
  typedef shape<Cfg> S;
  typedef wgmma_work<Cfg> Work;
  constexpr int THREADS = Cfg::BM / 64 * 128;
  constexpr unsigned A_BYTES = wgmma_tile_bytes(Cfg::BM), B_BYTES = wgmma_tile_bytes(Cfg::BN);
  constexpr int AHEAD = Cfg::STAGES - 2; // tiles copied ahead of the multiplied one
  constexpr int ACC = Cfg::BN / 2;
  static_assert(Cfg::BK == wgmma_block_k && Cfg::BM % 64 == 0 && Cfg::BN % 64 == 0 &&
                    Cfg::BN <= 256,
                "wgmma tiles are 64-row warpgroup slices of 64-column swizzle rows");
  static_assert(Cfg::A_VEC && Cfg::B_VEC, "wgmma tiles are copied in 16-byte chunks");
  static_assert(Cfg::GROUPS == 1 && Cfg::KSUMS == 1, "the wgmma kernel runs one problem");
  static_assert(Cfg::STAGES >= 3, "the pipeline keeps one group in flight and one tile ahead");
  static_assert(THREADS % 128 == 0, "whole warpgroups");

  extern __shared__ __align__(16) unsigned char gemm_smem[];
  // Swizzle atoms start on 1024-byte boundaries (the launch adds the slack).
  const unsigned sA = ((unsigned)__cvta_generic_to_shared(gemm_smem) + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const int tid = ctx.thread.x, wg = tid >> 7;

  const wgmma_tile_copy<Cfg, Cfg::BM, Cfg::A_KMAJOR, S::A_GROWS, S::A_GCOLS> copyA(tid);
  const wgmma_tile_copy<Cfg, Cfg::BN, Cfg::B_KMAJOR, S::B_GROWS, S::B_GCOLS> copyB(tid);
  auto loadStage = [&](const Work &x, int stage, int kt) {
    const idx k0 = (idx)kt * Cfg::BK;
    copyA(sA + stage * A_BYTES, x.a, x.m0, k0);
    copyB(sB + stage * B_BYTES, x.b, x.n0, k0);
  };
  // The first AHEAD tiles of an item; one commit group per tile (empty
  // groups past its end).
  auto prologue = [&](const Work &x) {
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
      if (s < x.nk)
        loadStage(x, s, x.ktBegin + s);
      asm volatile("cp.async.commit_group;\n" ::);
    }
  };

  long long w = ctx.block.x;
  if (w >= Work::COUNT)
    return;
  Work cur = Work::template at<Ops>(p, w);
  prologue(cur);
  for (; w < Work::COUNT; w += ctx.grid.x) {
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i)
      acc[i] = 0.0f;

    for (int i = 0; i < cur.nk; ++i) {
      asm volatile("cp.async.wait_group %0;\n" ::"n"(AHEAD - 1));
      // cp.async wrote through the generic proxy; wgmma reads through the
      // async proxy.
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
      __syncthreads();
      const int stage = i % Cfg::STAGES;
      fence_accumulators(acc);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int j = 0; j < Cfg::BK / 16; ++j)
        wgmma<Cfg::BN, Cfg::KIND, !Cfg::A_KMAJOR, !Cfg::B_KMAJOR>(
            acc, wgmma_operand(Cfg::A_KMAJOR, sA + stage * A_BYTES, wg * 64, j),
            wgmma_operand(Cfg::B_KMAJOR, sB + stage * B_BYTES, 0, j));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      // Refill the stage that group i - 2 read: each warpgroup waited for it
      // before the barrier above.
      const int next = i + AHEAD;
      if (next < cur.nk)
        loadStage(cur, next % Cfg::STAGES, cur.ktBegin + next);
      asm volatile("cp.async.commit_group;\n" ::);
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      fence_accumulators(acc);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_accumulators(acc);
    asm volatile("cp.async.wait_group 0;\n" ::);
    // Both warpgroups are done with every stage before they are refilled.
    __syncthreads();
    const Work done = cur;
    if (w + ctx.grid.x < Work::COUNT) {
      cur = Work::template at<Ops>(p, w + ctx.grid.x);
      prologue(cur);
    }

    wgmma_epilogue<Cfg, Epi>(p, done.split, done.batch, done.m0, done.n0, wg,
                             tid & 127, acc);
  }
}

} // namespace gemm
} // namespace kiln
