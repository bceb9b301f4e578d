//===- conv_tma.cuh - the forward convolution on TMA and wgmma (sm_90a) ---===//
//
// The channels-last forward pass of conv_layout.cuh (A = input windows,
// pixels x (kh, kw, c); B = the filter, O x (kh, kw, c)) with both operands
// copied by the tensor memory accelerator (tma.cuh) instead of gathered by
// the threads: A by im2col copies of BM output pixels' windows at one filter
// tap and 64 channels, B by tiled copies of the filter's rows, both into
// the 128-byte-swizzled tiles wgmma reads (gemm_layout.cuh). The copy
// engine computes every address, skips nothing the threads would and
// zero-fills the padding, so the threads' issue slots go to the tensor
// cores and the epilogue.
//
// Warp-specialised and persistent: warpgroup 0 is the producer, whose one
// thread walks the block's work items (conv_wgmma.cuh's wgmma_item) and
// copies their K steps into STAGES shared stages as they come free
// (mbarriers `full` and `empty` per stage); warpgroups 1 .. BM / 64 are the
// consumers, 64 rows x BN each, which multiply each stage once it is full,
// free it once the product that read it has retired, and run the epilogue
// (conv_wgmma.cuh's wgmma_epilogue, staged in a region of its own) while
// the producer already copies the next item's stages. The producer gives
// its registers to the consumers (setmaxnreg).
//
// Cfg: as conv_wgmma.cuh (forward pass, NHWC, A and B K-major), with CG a
// multiple of 64 so that a K step is one tap and 64 channels, and
// BLOCKS_PER_SM, the launch bounds' blocks per SM. Params: as
// conv_wgmma.cuh's, and a_map / b_map, pointers to the tensor maps the
// kernel takes: the input as an im2col map {C, W, H, N} whose box of
// window origins is the output's (corners -PL, -PT and
// (OW - 1) * SW + 1 - PL - W, (OH - 1) * SH + 1 - PT - H, element strides
// 1, SW, SH, 1), BM pixels and 64 channels per copy; the filter as a tiled
// map {KH * KW * CG, O} with boxes {64, BN}; both 128-byte swizzled
// (conv_layout.cuh's im2col_upper_corner and tma_shared_bytes).
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/conv_wgmma.cuh"
#include "kiln/pipeline.cuh"
#include "kiln/tma.cuh"

namespace kiln {
namespace conv {

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void tma_igemm(const launch_ctx &ctx,
                                          const Params &p) {
  typedef typename Cfg::index idx;
  typedef igemm_shape<Cfg> S;
  typedef wgmma_item<Cfg> Item;
  constexpr unsigned A_BYTES = gemm::wgmma_tile_bytes(Cfg::BM),
                     B_BYTES = gemm::wgmma_tile_bytes(Cfg::BN);
  constexpr int ACC = Cfg::BN / 2;
  constexpr int CONSUMERS = Cfg::BM / 64;
  constexpr int CONSUMER_THREADS = CONSUMERS * 128;
  static_assert(Cfg::KIND == 0 || Cfg::KIND == 1,
                "wgmma multiplies bf16 or f16");
  static_assert(Cfg::PASS == kForward && Cfg::NHWC && Cfg::A_KMAJOR &&
                    Cfg::B_KMAJOR,
                "TMA copies the windows and the filter of the channels-last "
                "forward pass");
  static_assert(Cfg::BK == gemm::wgmma_block_k &&
                    (Cfg::C / Cfg::GROUPS) % gemm::wgmma_block_k == 0,
                "a K step is one tap and 64 channels");
  static_assert(Cfg::BM % 64 == 0 && Cfg::BM <= 256 && Cfg::BN <= 256,
                "an im2col copy takes at most 256 pixels, a box 256 rows");
  static_assert(Cfg::STAGES >= 2, "the producer copies ahead of the product");
  // Registers: the block holds what every thread got at launch (the launch
  // bounds' share of the register file for BLOCKS_PER_SM blocks); the
  // producer keeps 40 and the consumers share the rest (ptxas allocates the
  // code after each setmaxnreg for its count).
  constexpr int THREADS = CONSUMER_THREADS + 128;
  constexpr int LAUNCH_REGS = 65536 / (Cfg::BLOCKS_PER_SM * THREADS) / 8 * 8;
  constexpr int PRODUCER_REGS = 40;
  constexpr int SHARED_REGS =
      (LAUNCH_REGS * THREADS - 128 * PRODUCER_REGS) / CONSUMER_THREADS / 8 * 8;
  constexpr int CONSUMER_REGS = SHARED_REGS < 240 ? SHARED_REGS : 240;
  constexpr bool REALLOCATE = LAUNCH_REGS > PRODUCER_REGS;
  constexpr bool STAGED = wgmma_stages_results(
      Cfg::BM, Cfg::BN, Cfg::SPLIT, Epi::RUN, (int)sizeof(typename Epi::run_t));

  extern __shared__ __align__(16) unsigned char conv_smem[];
  const unsigned base = (unsigned)__cvta_generic_to_shared(conv_smem);
  const unsigned sA = (base + 1023u) & ~1023u;
  const unsigned sB = sA + Cfg::STAGES * A_BYTES;
  const unsigned sStaged = sB + Cfg::STAGES * B_BYTES;
  // full[s] at bars + 8 s, empty[s] at bars + 8 (STAGES + s).
  const unsigned bars = sStaged + 2 * A_BYTES;
  auto full = [&](int s) { return bars + 8u * s; };
  auto empty = [&](int s) { return bars + 8u * (Cfg::STAGES + s); };

  const int tid = ctx.thread.x, wg = tid >> 7;
  // Every consumer warpgroup reads every stage.
  tma::init_stage_barriers(tid, Cfg::STAGES, full, empty, CONSUMERS);
  __syncthreads();

  if (wg == 0) {
    if constexpr (REALLOCATE)
      tma::release_registers<PRODUCER_REGS>();
    if (tid != 0)
      return;
    tma::prefetch(*p.a_map);
    tma::prefetch(*p.b_map);
    pipeline_state<Cfg::STAGES> write;
    for (long long w = ctx.block.x; w < Item::COUNT; w += ctx.grid.x) {
      const Item x = Item::at(w);
      // The window origin of the item's first output pixel; the copy walks
      // the next BM pixels' origins across rows and images.
      const pixel<idx> px =
          split_pixel(Cfg{}, x.m0, (idx)Cfg::OH, (idx)Cfg::OW);
      const int ox = (int)(px.x * Cfg::SW - Cfg::PL),
                oy = (int)(px.y * Cfg::SH - Cfg::PT), n = (int)px.n;
      const int row = (int)(x.group * og(Cfg{}) + x.n0);
      for (int kt = x.kt_begin; kt < x.kt_begin + x.nk; ++kt) {
        const int stage = write.index;
        tma::wait(empty(stage), write.phase ^ 1u);
        tma::arrive_expect_bytes(full(stage), A_BYTES + B_BYTES);
        const int k0 = kt * Cfg::BK;
        const int tap = k0 / (int)cg(Cfg{}), c0 = k0 % (int)cg(Cfg{});
        const int kh = tap / (int)Cfg::KW, kw = tap % (int)Cfg::KW;
        tma::copy_im2col_4d(sA + stage * A_BYTES, *p.a_map, full(stage),
                            (int)(x.group * cg(Cfg{})) + c0, ox, oy, n,
                            (unsigned short)(kw * Cfg::DW),
                            (unsigned short)(kh * Cfg::DH));
        tma::copy_2d(sB + stage * B_BYTES, *p.b_map, full(stage), k0, row);
        write.advance();
      }
    }
    return;
  }

  if constexpr (REALLOCATE)
    tma::claim_registers<CONSUMER_REGS>();
  const int ctid = tid - 128, cwg = wg - 1;
  typedef typename Epi::run_t R;
  R *staged = reinterpret_cast<R *>(conv_smem + (sStaged - base));
  pipeline_state<Cfg::STAGES> read;
  for (long long w = ctx.block.x; w < Item::COUNT; w += ctx.grid.x) {
    const Item x = Item::at(w);
    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i)
      acc[i] = 0.0f;
    int held = -1; // the stage the product in flight reads
    for (int i = 0; i < x.nk; ++i) {
      const int stage = read.index;
      tma::wait(full(stage), read.phase);
      wgmma::fence_accumulators(acc);
      wgmma::fence();
#pragma unroll
      for (int j = 0; j < Cfg::BK / 16; ++j)
        wgmma::mma<Cfg::BN, Cfg::KIND, false, false>(
            acc, gemm::wgmma_operand(true, sA + stage * A_BYTES, cwg * 64, j),
            gemm::wgmma_operand(true, sB + stage * B_BYTES, 0, j));
      wgmma::commit_group();
      // The previous product has retired: its stage is free.
      wgmma::wait<1>();
      wgmma::fence_accumulators(acc);
      if (held >= 0 && (ctid & 127) == 0)
        tma::arrive(empty(held));
      held = stage;
      read.advance();
    }
    wgmma::wait<0>();
    wgmma::fence_accumulators(acc);
    if (held >= 0 && (ctid & 127) == 0)
      tma::arrive(empty(held));
    wgmma_epilogue<Cfg, Epi, STAGED>(p, x, acc, staged, ctid, [] {
      tma::named_barrier(1, CONSUMER_THREADS);
    });
  }
}

} // namespace conv
} // namespace kiln
