//===- AttentionTemplateInstances.cpp - attention kernels to check --------===//
//
// Every tile the attention planner chooses, with the largest head dim it
// chooses that tile for on sm_90 (the most registers per thread), causal or
// not, in each storage type; each kernel rendered by the planner itself.
// bf16 instances read [B, T, H, D] buffers (the strided head addressing),
// f32 ones use 64-bit offsets; causal ones take the forward's row
// log-sum-exp into the backward. The Hopper tensor-core kernels come at each
// head dim that changes their plan, the backward also in one pass and (its
// dQ kernel) without a dQ.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/TemplateInstances.h"
#include "codegen/cuda/attention/AttentionPlanner.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

namespace mlir::kiln::codegen {
namespace {

constexpr int64_t kBatch = 2, kHeads = 4, kTq = 1000, kTk = 1090;

AttentionTensor tensor(bool interleaved, int64_t rows, int64_t dim,
                       LaunchArg arg) {
  if (!interleaved)
    return AttentionTensor::dense(kHeads, rows, dim, arg);
  return {kHeads, rows * kHeads * dim, dim, kHeads * dim, arg};
}

AttentionProblem problem(bool backward, int64_t dim, bool causal,
                         llvm::StringRef elem) {
  AttentionProblem p;
  p.backward = backward;
  p.batchHeads = kBatch * kHeads;
  p.tq = kTq;
  p.tk = kTk;
  p.d = p.dv = dim;
  p.scale = 1.0 / std::sqrt(double(dim));
  p.causal = causal;
  p.elem = elem.str();
  p.wideIndex = elem == "float";
  bool interleaved = elem == "__nv_bfloat16";
  int64_t next = 0;
  auto operand = [&](int64_t rows) {
    p.operands.push_back(
        tensor(interleaved, rows, dim, LaunchArg::operand(next++)));
  };
  operand(kTq);
  operand(kTk);
  operand(kTk);
  if (backward) {
    operand(kTq);
    operand(kTq);
    p.results = {tensor(interleaved, kTq, dim, LaunchArg::result(0)),
                 tensor(interleaved, kTk, dim, LaunchArg::result(1)),
                 tensor(interleaved, kTk, dim, LaunchArg::result(2))};
  } else {
    p.results = {tensor(interleaved, kTq, dim, LaunchArg::result(0))};
  }
  // Causal instances pass the rows' log-sum-exp from the forward to the
  // backward, the others recompute it.
  if (causal)
    p.rowLse = backward ? LaunchArg::operand(next++) : LaunchArg::result(1);
  return p;
}

/// The largest head dim (a multiple of 16) for which the planner chooses
/// `tile` on sm_90.
int64_t largestHeadDim(bool backward, int64_t tile) {
  const GpuTarget &target = *GpuTarget::forArch("sm_90");
  int64_t largest = 0;
  for (int64_t dim = 16; dim <= 4096; dim += 16) {
    FailureOr<int64_t> chosen =
        chooseAttentionTile(problem(backward, dim, false, "float"), target);
    if (succeeded(chosen) && *chosen == tile)
      largest = dim;
  }
  return largest;
}

} // namespace

std::vector<TemplateInstance> attentionTemplateInstances() {
  static const std::pair<const char *, const char *> elems[] = {
      {"float", "f32"}, {"__nv_bfloat16", "bf16"}, {"__half", "f16"}};
  std::vector<TemplateInstance> instances;
  for (bool backward : {false, true})
    for (int64_t tile : kAttentionTiles) {
      int64_t dim = largestHeadDim(backward, tile);
      for (bool causal : {false, true})
        for (auto [elem, short_] : elems) {
          FusionBuilder builder("// attention template instance\n");
          planAttention(problem(backward, dim, causal, elem), tile, builder);
          GeneratedFusion fusion = builder.take();
          for (const GeneratedKernel &kernel : fusion.kernels)
            instances.push_back(
                {llvm::formatv("{0}_{1}_t{2}_d{3}{4}", kernel.templateName,
                               short_, tile, dim, causal ? "_causal" : "")
                     .str(),
                 kernel.source,
                 {"sm_90", "sm_80"}});
        }
    }
  // The Hopper kernels at every head dim that changes their tiles, stages
  // or panels, in bf16 (interleaved heads) and f16 (dense).
  const GpuTarget &hopper = *GpuTarget::forArch("sm_90");
  // The kernels of `p`'s plan named `only` (all where empty).
  auto addHopper = [&](const AttentionProblem &p, bool fused, bool pingpong,
                       llvm::StringRef name, llvm::StringRef only = "") {
    std::optional<AttentionWgmmaPlan> plan =
        chooseAttentionWgmma(p, hopper, true, false, fused,
                             pingpong ? AttentionSchedule::PingPong
                                      : AttentionSchedule::Cooperative);
    if (!plan || plan->fused != fused || plan->pingpong != pingpong)
      return;
    FusionBuilder builder("// attention template instance\n");
    planAttentionWgmma(p, *plan, builder);
    GeneratedFusion fusion = builder.take();
    for (const GeneratedKernel &kernel : fusion.kernels)
      if (only.empty() || kernel.templateName == only)
        instances.push_back(
            {llvm::formatv("{0}_{1}", kernel.templateName, name).str(),
             kernel.source,
             {"sm_90a"}});
  };
  for (bool backward : {false, true})
    for (int64_t dim : {64, 96, 128, 192, 256})
      for (bool causal : {false, true})
        for (auto [elem, short_] : elems) {
          if (llvm::StringRef(elem) == "float")
            continue;
          AttentionProblem p = problem(backward, dim, causal, elem);
          std::string name = llvm::formatv("{0}_d{1}{2}", short_, dim,
                                           causal ? "_causal" : "");
          // Each twice: the forward with and without turns between its
          // consumers, the backward in two deterministic kernels and in one
          // pass (which takes the forward's row log-sum-exp).
          for (bool variant : {false, true}) {
            bool fused = backward && variant, pingpong = !backward && variant;
            if (fused && !p.rowLse)
              p.rowLse = LaunchArg::operand(5);
            addHopper(p, fused, pingpong, pingpong ? name + "_pingpong" : name);
          }
          // The backward of a query that needs no gradient (bf16): the dQ
          // kernel computes the rows' statistics alone (the others are
          // those above).
          if (backward && llvm::StringRef(elem) == "__nv_bfloat16") {
            AttentionProblem noDq = problem(backward, dim, causal, elem);
            noDq.results[0].reset();
            addHopper(noDq, false, false, name + "_no_dq",
                      "attention_wgmma_bwd_dq");
          }
        }
  return instances;
}

} // namespace mlir::kiln::codegen
