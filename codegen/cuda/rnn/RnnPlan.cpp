//===- RnnPlan.cpp - the search over recurrent kernel configurations ------===//
//
// Every (blocks per group K, splits KS, batch tile BT) whose registers and
// shared memory fit one block, and whose groups fit the GPU, is scored by a
// model of one step's critical path in cycles: the serial mma chain of a
// warp, the cells, the exchange of h (or of the backward partials) and the
// group's barrier; a layer whose groups need several waves (or, for grid
// groups, several cooperative launches) pays for each. The model only ranks
// candidates; its constants are round figures for sm_80/sm_90.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/rnn/RnnPlan.h"

#include "kiln/rnn_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::rnn;

constexpr int kMaxRegisters = 255;
constexpr int kOtherRegisters = 40; // addresses, loop state, temporaries
constexpr int kRegisterMargin = 8;

/// Registers per thread of a configuration, by the kernel's arrays.
int registersOf(const RnnProblem &p, int bt, int u, int ks, bool relaxed) {
  const int g = layout::gates_r(p.function), gw = layout::gates_w(p.function),
            gb = layout::gates_b(p.function),
            s = layout::num_states(p.function), mt = bt / 16;
  const int cells = layout::cells_per_thread(bt, u, layout::warps(u, ks) * 32);
  // tf32 in three products keeps both parts of the fragments (the compiler
  // splits them once, outside the step loop).
  const int split = p.kind == layout::kTf32x3 && !relaxed ? 2 : 1;
  int regs = split * layout::forward_fragment_registers(p.function, p.units,
                                                        p.kind, ks) +
             mt * g * 4 /*partial products*/ +
             4 * mt * std::min(4, layout::ksteps_per_warp(p.units, p.kind, ks))
             /*A fragments loaded ahead*/
             + cells * (gb + s) + kOtherRegisters;
  if (p.backward)
    regs += split * layout::transposed_fragment_registers(p.function, p.units,
                                                          u, ks, p.kind) +
            4 * mt *
                std::min(4, layout::transposed_ksteps_per_warp(
                                p.function, p.units, u, ks, p.kind)) +
            mt * layout::transposed_ntiles(p.units, u, ks) * 4 +
            cells * (s + 1) /*carried, dh*/ + gw + g + 3 * s /*one cell*/;
  else
    regs += 2 * cells * gw /*x and the next step's x*/;
  return regs;
}

/// Cycles of one cell's equations: forward, or backward (about twice),
/// with the approximate transcendentals of 16-bit storage or exact f32 ones.
double cellCycles(const RnnProblem &p) {
  double cycles = p.function == layout::kElman  ? 50
                  : p.function == layout::kGru  ? 110
                  : p.function == layout::kLstm ? 120
                                                : 170;
  if (p.kind >= layout::kTf32)
    cycles *= 3;
  return p.backward ? 2 * cycles : cycles;
}

const char *syncName(int sync) {
  switch (sync) {
  case layout::kSyncBlock:
    return "block";
  case layout::kSyncCluster:
    return "cluster";
  default:
    return "grid";
  }
}

} // namespace

std::string RnnPlan::describe() const {
  return llvm::formatv("bt={0} u={1} k={2} ks={3} sync={4} warps={5} "
                       "smem={6} regs~{7} groups={8} launches={9} "
                       "step~{10}cyc{11}",
                       batchTile, unitsPerBlock, blocksPerGroup, splits,
                       syncName(sync), threads / 32, sharedBytes, registers,
                       groups, launches(), int64_t(stepCycles),
                       relaxed ? " relaxed" : "")
      .str();
}

/// The units per block of `k` blocks per group: whole 8-unit columns.
static int unitsPerBlockOf(const RnnProblem &p, int64_t k) {
  return int(::kiln::ceil_div(::kiln::ceil_div(p.units, k), 8) * 8);
}

/// Why `bt`, `k` and `ks` do not lay `p` out on the kernels' blocks; empty
/// if they do.
static std::string layoutMismatch(const RnnProblem &p, const GpuTarget &target,
                                  int bt, int64_t k, int ks) {
  if (bt != 16 && bt != 32 && bt != 64)
    return "the batch tile is 16, 32 or 64 rows";
  if (k < 1 || k > int64_t(target.smCount))
    return "a group has 1 to " + std::to_string(target.smCount) +
           " blocks on " + target.arch.str();
  if (::kiln::ceil_div(p.units, unitsPerBlockOf(p, k)) != k)
    return std::to_string(k) + " blocks do not share " +
           std::to_string(p.units) + " units in whole 8-unit columns";
  if (ks != 1 && ks != 2 && ks != 4 && ks != 8 && ks != 16)
    return "the reduction is split 1, 2, 4, 8 or 16 ways";
  if (layout::warps(unitsPerBlockOf(p, k), ks) > 32)
    return "a block of " + std::to_string(unitsPerBlockOf(p, k)) +
           " units split " + std::to_string(ks) + " ways has over 32 warps";
  const int64_t dp = layout::padded(p.units);
  if (ks > 1 && layout::ksteps_per_warp(p.units, p.kind, ks) * (ks - 1) >=
                    dp / layout::mma_k(p.kind))
    return std::to_string(ks) + " splits leave a split without k-steps";
  return "";
}

std::optional<RnnPlan> scoreRnnPlan(const RnnProblem &p,
                                    const GpuTarget &target, int bt, int64_t k,
                                    int ks, bool relaxed, std::string *why) {
  auto fail = [&](std::string reason) -> std::optional<RnnPlan> {
    if (why)
      *why = std::move(reason);
    return std::nullopt;
  };
  if (std::string reason = layoutMismatch(p, target, bt, k, ks);
      !reason.empty())
    return fail(reason);
  const int g = layout::gates_r(p.function);
  const int mmaCost = p.kind == layout::kTf32x3 ? 3
                      : p.kind == layout::kTf32 ? 2
                                                : 1;
  const int64_t groups = p.heads * ::kiln::ceil_div(p.batch, bt);
  const int u = unitsPerBlockOf(p, k);
  const int sync = rnnSyncOf(k, target);
  const int warps = layout::warps(u, ks);
  const int threads = warps * 32;
  // A block of `threads` gets at most registersPerSm / threads each;
  // the estimate counts arrays, and the compiler needs some more.
  const int regs = registersOf(p, bt, u, ks, relaxed);
  const int64_t cap = std::min<int64_t>(
      kMaxRegisters, int64_t(target.registersPerSm) / threads);
  if (!relaxed && regs + kRegisterMargin > cap)
    return fail("about " + std::to_string(regs) +
                " registers per thread exceed the " + std::to_string(cap) +
                " of a block of " + std::to_string(threads) + " threads");
  // Relaxed, registers past the cap spill: each costs local memory
  // traffic every step.
  const double spillCycles = regs > cap ? 40.0 * (regs - cap) : 0.0;
  const int64_t shared =
      p.backward ? layout::backward_shared_bytes(p.function, p.units, bt, u,
                                                 int(k), ks, p.kind, sync)
                 : layout::forward_shared_bytes(p.function, p.units, bt, u, ks,
                                                p.kind);
  if (shared > int64_t(target.sharedBytesPerBlock))
    return fail(std::to_string(shared) + " bytes of shared memory exceed the " +
                std::to_string(target.sharedBytesPerBlock) + " of " +
                target.arch.str());
  // Groups resident at once: one block per SM at these sizes.
  const int64_t perWave = std::max<int64_t>(1, target.smCount / k);
  const int64_t groupsPerLaunch =
      sync == layout::kSyncGrid ? std::min(groups, perWave) : groups;
  const int64_t waves = ::kiln::ceil_div(groups, perWave);
  // One step's critical path: the warps' mma chains, the cells
  // (adding the splits' partials), the exchange and the barrier.
  const int mt = bt / 16;
  const double mmaLatency = 32.0 * mmaCost;
  const int cells = layout::cells_per_thread(bt, u, threads);
  const double hLoad =
      700 + 40.0 * ::kiln::ceil_div(int64_t(bt) * p.units *
                                        layout::element_bytes(p.kind),
                                    16 * threads);
  double step = layout::ksteps_per_warp(p.units, p.kind, ks) *
                    std::max(mmaLatency, g * mt * 4.0) +
                50 + cells * cellCycles(p) + 4.0 * ks * g;
  switch (sync) {
  case layout::kSyncBlock:
    step += 50;
    break;
  case layout::kSyncCluster:
    step += 400 + 10.0 * k * cells;
    break;
  default:
    step += 1800 + hLoad;
    break;
  }
  if (p.backward) {
    const int tg =
        layout::transposed_groups(p.function, p.units, u, ks, p.kind);
    step +=
        layout::transposed_ksteps_per_warp(p.function, p.units, u, ks, p.kind) *
            std::max(mmaLatency,
                     layout::transposed_ntiles(p.units, u, ks) * mt * 4.0) +
        60 + 4.0 * k * tg * cells + hLoad;
  }
  step += spillCycles;
  step *= double(waves);
  RnnPlan plan;
  plan.batchTile = bt;
  plan.unitsPerBlock = u;
  plan.blocksPerGroup = int(k);
  plan.splits = ks;
  plan.sync = sync;
  plan.groups = groups;
  plan.groupsPerLaunch = groupsPerLaunch;
  plan.threads = threads;
  plan.sharedBytes = shared;
  plan.registers = regs;
  plan.stepCycles = step;
  plan.relaxed = relaxed;
  return plan;
}

int rnnSyncOf(int64_t k, const GpuTarget &target) {
  return k == 1 ? layout::kSyncBlock
         : target.hasClusters && k <= int64_t(target.maxClusterBlocks)
             ? layout::kSyncCluster
             : layout::kSyncGrid;
}

/// The search; `relaxed` counts the fragments of tf32 in three products
/// once and admits configurations past the registers (they spill, at a
/// cost the model counts): for heads that fit no other way.
static std::optional<RnnPlan> search(const RnnProblem &p,
                                     const GpuTarget &target, bool relaxed) {
  std::optional<RnnPlan> best;
  const int mmaK = layout::mma_k(p.kind);
  const int64_t dp = layout::padded(p.units);
  for (int bt = 16; bt <= 64; bt *= 2) {
    if (bt > 16 && (bt / 2) >= p.batch)
      break;
    for (int64_t k = 1; k <= target.smCount; ++k) {
      const int u = unitsPerBlockOf(p, k);
      if (::kiln::ceil_div(p.units, u) != k)
        continue;
      for (int ks = 1; ks <= 16; ks *= 2) {
        if (layout::warps(u, ks) > 32)
          break;
        // Every split gets k-steps.
        if (ks > 1 && layout::ksteps_per_warp(p.units, p.kind, ks) * (ks - 1) >=
                          dp / mmaK)
          break;
        std::optional<RnnPlan> plan =
            scoreRnnPlan(p, target, bt, k, ks, relaxed, nullptr);
        if (plan && (!best || plan->stepCycles < best->stepCycles))
          best = plan;
      }
    }
  }
  return best;
}

std::optional<RnnPlan> planRnn(const RnnProblem &p, const GpuTarget &target) {
  if (std::optional<RnnPlan> plan = search(p, target, /*relaxed=*/false))
    return plan;
  return search(p, target, /*relaxed=*/true);
}

} // namespace mlir::kiln::codegen
