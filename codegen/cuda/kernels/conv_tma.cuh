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
// Roles: the producer's loads (tma_load), the consumers' main loop
// (tma_mma, tma_mma_tail) and their walk over the items (tma_consume),
// which ends in conv_wgmma.cuh's epilogue; the block's shared memory is
// conv_layout.cuh's tma_smem (tma_shared.cuh), by which the planner sizes
// the launch, and pipeline_state (pipeline.cuh) tracks each side's stage
// and phase.
//
//===----------------------------------------------------------------------===//
#pragma once
#include "kiln/conv_wgmma.cuh"
#include "kiln/pipeline.cuh"
#include "kiln/tma.cuh"
#include "kiln/tma_shared.cuh"

namespace kiln {
namespace conv {

// The block for a configuration: BM / 64 consumer warpgroups of 64 rows x
// BN each, their registers, and the layout of its shared memory.
// Registers: the block holds what every thread got at launch (the launch
// bounds' share of the register file for BLOCKS_PER_SM blocks); the
// producer keeps 40 and the consumers share the rest (ptxas allocates the
// code after each setmaxnreg for its count).
// (Enumerators rather than static members, which NVRTC would emit as
// globals of the PTX.)
template <class Cfg> struct tma_roles {
  enum : int {
    CONSUMERS = Cfg::BM / 64,
    CONSUMER_THREADS = CONSUMERS * 128,
    THREADS = CONSUMER_THREADS + 128,
    LAUNCH_REGS = 65536 / (Cfg::BLOCKS_PER_SM * THREADS) / 8 * 8,
    PRODUCER_REGS = 40,
    SHARED_REGS = (LAUNCH_REGS * THREADS - 128 * PRODUCER_REGS) /
                  CONSUMER_THREADS / 8 * 8,
    CONSUMER_REGS = SHARED_REGS < 240 ? SHARED_REGS : 240,
    REALLOCATE = LAUNCH_REGS > PRODUCER_REGS
  };
  static __host__ __device__ constexpr gemm::wgmma_tma_smem smem() {
    return tma_smem(Cfg::BM, Cfg::BN, Cfg::STAGES);
  }
};

// The producer (one thread of warpgroup 0): the K steps of the block's
// items into the stages as they come free, an im2col copy of the windows
// and a tiled copy of the filter each.
template <class Cfg, class Params>
__device__ __forceinline__ void tma_load(const launch_ctx &ctx, const Params &p,
                                         const tma_shared<tma_roles<Cfg>> &sm) {
  typedef typename Cfg::index idx;
  typedef wgmma_item<Cfg> Item;
  constexpr unsigned A_BYTES = gemm::wgmma_tile_bytes(Cfg::BM),
                     B_BYTES = gemm::wgmma_tile_bytes(Cfg::BN);
  tma::prefetch(*p.a_map);
  tma::prefetch(*p.b_map);
  pipeline_state<Cfg::STAGES> write;
  for (long long w = ctx.block.x; w < Item::COUNT; w += ctx.grid.x) {
    const Item x = Item::at(w);
    // The window origin of the item's first output pixel; the copy walks
    // the next BM pixels' origins across rows and images.
    const pixel<idx> px = split_pixel(Cfg{}, x.m0, (idx)Cfg::OH, (idx)Cfg::OW);
    const int ox = (int)(px.x * Cfg::SW - Cfg::PL),
              oy = (int)(px.y * Cfg::SH - Cfg::PT), n = (int)px.n;
    const int row = (int)(x.group * og(Cfg{}) + x.n0);
    for (int kt = x.kt_begin; kt < x.kt_begin + x.nk; ++kt) {
      const int stage = write.index;
      tma::wait(sm.empty(stage), write.phase ^ 1u);
      tma::arrive_expect_bytes(sm.full(stage), A_BYTES + B_BYTES);
      const int k0 = kt * Cfg::BK;
      const int tap = k0 / (int)cg(Cfg{}), c0 = k0 % (int)cg(Cfg{});
      const int kh = tap / (int)Cfg::KW, kw = tap % (int)Cfg::KW;
      tma::copy_im2col_4d(sm.a(stage), *p.a_map, sm.full(stage),
                          (int)(x.group * cg(Cfg{})) + c0, ox, oy, n,
                          (unsigned short)(kw * Cfg::DW),
                          (unsigned short)(kh * Cfg::DH));
      tma::copy_2d(sm.b(stage), *p.b_map, sm.full(stage), k0, row);
      write.advance();
    }
  }
}

// The consumer's main loop over an item's `nk` K steps: each stage's
// products once its copies have landed, one commit group in flight, a
// stage freed (by the warpgroup's first thread, ctid % 128 == 0) once the
// group that read it has retired. Returns the stage the last group reads
// (-1 for none), which tma_mma_tail frees.
template <class Cfg>
__device__ __forceinline__ int
tma_mma(float (&acc)[Cfg::BN / 2], pipeline_state<Cfg::STAGES> &read, int nk,
        const tma_shared<tma_roles<Cfg>> &sm, int cwg, int ctid) {
  int held = -1; // the stage the product in flight reads
  for (int i = 0; i < nk; ++i) {
    const int stage = read.index;
    tma::wait(sm.full(stage), read.phase);
    wgmma::fence_accumulators(acc);
    wgmma::fence();
#pragma unroll
    for (int j = 0; j < Cfg::BK / 16; ++j)
      wgmma::mma<Cfg::BN, Cfg::KIND, false, false>(
          acc, gemm::wgmma_operand(true, sm.a(stage), cwg * 64, j),
          gemm::wgmma_operand(true, sm.b(stage), 0, j));
    wgmma::commit_group();
    // The previous product has retired: its stage is free.
    wgmma::wait<1>();
    wgmma::fence_accumulators(acc);
    if (held >= 0 && (ctid & 127) == 0)
      tma::arrive(sm.empty(held));
    held = stage;
    read.advance();
  }
  return held;
}

// The end of an item's products: the last group retires and frees its
// stage.
template <class Cfg>
__device__ __forceinline__ void
tma_mma_tail(float (&acc)[Cfg::BN / 2], int held,
             const tma_shared<tma_roles<Cfg>> &sm, int ctid) {
  wgmma::wait<0>();
  wgmma::fence_accumulators(acc);
  if (held >= 0 && (ctid & 127) == 0)
    tma::arrive(sm.empty(held));
}

// Consumer warpgroup cwg (thread ctid of the consumers): its products and
// epilogue of every item of the block, the epilogue staged in the
// layout's staging region when the results take it; `sync` is a barrier
// of the consumers.
template <class Cfg, class Epi, class Params, class Sync>
__device__ __forceinline__ void
tma_consume(const launch_ctx &ctx, const Params &p,
            const tma_shared<tma_roles<Cfg>> &sm, unsigned char *smem,
            unsigned smem_base, int cwg, int ctid, Sync sync) {
  typedef wgmma_item<Cfg> Item;
  typedef typename Epi::run_t R;
  constexpr bool STAGED = wgmma_stages_results(
      Cfg::BM, Cfg::BN, Cfg::SPLIT, Epi::RUN, (int)sizeof(typename Epi::run_t));
  R *staged = reinterpret_cast<R *>(smem + (sm.staging(0) - smem_base));
  pipeline_state<Cfg::STAGES> read;
  for (long long w = ctx.block.x; w < Item::COUNT; w += ctx.grid.x) {
    const Item x = Item::at(w);
    float acc[Cfg::BN / 2];
#pragma unroll
    for (int i = 0; i < Cfg::BN / 2; ++i)
      acc[i] = 0.0f;
    const int held = tma_mma<Cfg>(acc, read, x.nk, sm, cwg, ctid);
    tma_mma_tail<Cfg>(acc, held, sm, ctid);
    wgmma_epilogue<Cfg, Epi, STAGED>(p, x, acc, staged, ctid, sync);
  }
}

template <class Cfg, class Epi, class Params>
__device__ __forceinline__ void tma_igemm(const launch_ctx &ctx,
                                          const Params &p) {
  typedef tma_roles<Cfg> Roles;
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

  extern __shared__ __align__(16) unsigned char conv_smem[];
  const unsigned base = (unsigned)__cvta_generic_to_shared(conv_smem);
  const tma_shared<Roles> sm((base + 1023u) & ~1023u);
  const int tid = ctx.thread.x, wg = tid >> 7;
  // Every consumer warpgroup reads every stage.
  tma::init_stage_barriers(
      tid, Cfg::STAGES, [&](int s) { return sm.full(s); },
      [&](int s) { return sm.empty(s); }, Roles::CONSUMERS);
  __syncthreads();

  if (wg == 0) {
    if constexpr (Roles::REALLOCATE)
      tma::release_registers<Roles::PRODUCER_REGS>();
    if (tid == 0)
      tma_load<Cfg>(ctx, p, sm);
    return;
  }
  if constexpr (Roles::REALLOCATE)
    tma::claim_registers<Roles::CONSUMER_REGS>();
  // Defined here: the barrier's type names the epilogue's shared arrays in
  // the PTX.
  tma_consume<Cfg, Epi>(ctx, p, sm, conv_smem, base, wg - 1, tid - 128,
                        [] { tma::named_barrier(1, Roles::CONSUMER_THREADS); });
}

} // namespace conv
} // namespace kiln
