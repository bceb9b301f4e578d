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

#include "codegen/cuda/RnnPlan.h"

#include "kiln/rnn_layout.cuh"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace mlir::kiln::codegen {
namespace {

namespace layout = ::kiln::rnn;

constexpr int kMaxRegisters = 232; // below 255, leaving the compiler room
constexpr int kOtherRegisters = 40; // addresses, loop state, temporaries

/// Registers per thread of a configuration, by the kernel's arrays.
int registersOf(const RnnProblem &p, int bt, int u, int ks) {
  const int g = layout::gates_r(p.function), gw = layout::gates_w(p.function),
            s = layout::num_states(p.function), mt = bt / 16;
  int regs = layout::forward_fragment_registers(p.function, p.units, p.kind,
                                                ks) +
             mt * g * 4 /*acc*/ + mt * 4 * s /*states*/ +
             2 * layout::gates_b(p.function) /*bias*/ + kOtherRegisters;
  if (p.backward)
    regs += layout::transposed_fragment_registers(p.function, p.units, u, ks,
                                                  p.kind) +
            mt * layout::transposed_ntiles(p.units, u, ks) * 4 /*dacc*/ +
            mt * 4 /*dh*/ + gw + s /*one cell's inputs*/;
  else
    regs += 2 * mt * 4 * gw /*x and the prefetched next x*/;
  return regs;
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
                       "step~{10}cyc",
                       batchTile, unitsPerBlock, blocksPerGroup, splits,
                       syncName(sync), threads / 32, sharedBytes, registers,
                       groups, launches(), int64_t(stepCycles))
      .str();
}

std::optional<RnnPlan> planRnn(const RnnProblem &p, const GpuTarget &target) {
  std::optional<RnnPlan> best;
  const int g = layout::gates_r(p.function);
  const int mmaK = layout::mma_k(p.kind);
  const int mmaCost = p.kind == layout::kTf32x3 ? 3 : p.kind == layout::kTf32
                                                           ? 2
                                                           : 1;
  const int64_t dp = layout::padded(p.units);
  for (int bt = 16; bt <= 64; bt *= 2) {
    if (bt > 16 && (bt / 2) >= p.batch)
      break;
    const int64_t groups = p.heads * ::kiln::ceil_div(p.batch, bt);
    for (int64_t k = 1; k <= target.smCount; ++k) {
      const int u = int(::kiln::ceil_div(::kiln::ceil_div(p.units, k), 8) * 8);
      if (::kiln::ceil_div(p.units, u) != k)
        continue;
      const int sync =
          k == 1 ? layout::kSyncBlock
          : target.hasClusters && k <= int64_t(target.maxClusterBlocks)
              ? layout::kSyncCluster
              : layout::kSyncGrid;
      for (int ks = 1; ks <= 16; ks *= 2) {
        const int warps = layout::warps(u, ks);
        if (warps > 32)
          break;
        if (ks > 1 && layout::ksteps_per_warp(p.units, p.kind, ks) *
                              (ks - 1) >=
                          dp / mmaK)
          break; // a split would have no k-steps
        const int threads = warps * 32;
        const int regs = registersOf(p, bt, u, ks);
        if (regs > kMaxRegisters ||
            int64_t(regs) * threads > int64_t(target.registersPerSm))
          continue;
        const int64_t shared =
            p.backward ? layout::backward_shared_bytes(p.function, p.units, bt,
                                                       u, int(k), ks, p.kind,
                                                       sync)
                       : layout::forward_shared_bytes(p.function, p.units, bt,
                                                      u, ks, p.kind);
        if (shared > int64_t(target.sharedBytesPerBlock))
          continue;
        // Groups resident at once: one block per SM at these sizes.
        const int64_t perWave = std::max<int64_t>(1, target.smCount / k);
        const int64_t groupsPerLaunch =
            sync == layout::kSyncGrid ? std::min(groups, perWave) : groups;
        const int64_t waves = ::kiln::ceil_div(groups, perWave);
        // One step's critical path.
        const int mt = bt / 16;
        double chain =
            double(layout::ksteps_per_warp(p.units, p.kind, ks)) * g * mt *
            8.0 * mmaCost;
        if (p.backward)
          chain += double(layout::transposed_ksteps(p.function, u, p.kind)) *
                   layout::transposed_ntiles(p.units, u, ks) * mt * 8.0 *
                   mmaCost;
        double cells = 120.0 * mt * (p.backward ? 2 : 1);
        double splitsCost = ks > 1 ? 80.0 + 10.0 * ks : 0.0;
        double exchange = 0;
        switch (sync) {
        case layout::kSyncBlock:
          exchange = 60;
          break;
        case layout::kSyncCluster:
          exchange = 350 + 20.0 * k * (p.backward ? 2 : 1);
          break;
        default:
          // L2 round trips for the barrier and for h or the partials.
          exchange = 1800 + double(bt) * dp * (p.backward ? 4 : 2) * k /
                                 std::max(1, threads * 16) * 30.0;
          break;
        }
        // Backward also loads h before each step.
        if (p.backward)
          exchange += 400;
        const double step =
            (chain + cells + splitsCost + exchange) * double(waves);
        if (!best || step < best->stepCycles) {
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
          best = plan;
        }
      }
    }
  }
  return best;
}

} // namespace mlir::kiln::codegen
