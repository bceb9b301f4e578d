//===- RnnSelection.cpp - an rnn fusion's kernel, chosen and checked ------===//
//
// selectRnn runs the search (RnnPlan.h); rnnPlanOf scores the
// configuration a #kiln_cuda.rnn records by the same model, so that a
// recorded choice renders (and reports in --stats) as the search's own,
// and one the kernels cannot take is an error at the fusion.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/rnn/RnnEmitter.h"

#include "kiln/rnn_layout.cuh"

namespace mlir::kiln::codegen {

namespace layout = ::kiln::rnn;

FailureOr<RnnPlan> selectRnn(Operation *op, const RnnProblem &p,
                             const CodegenOptions &options) {
  if (std::optional<RnnPlan> plan = planRnn(p, options.target()))
    return *plan;
  InFlightDiagnostic diag = op->emitError("a recurrent layer of ")
                            << p.heads << " heads of " << p.units
                            << " units does not fit one GPU of "
                            << options.target().part;
  if (p.kind >= layout::kTf32)
    diag << ": in f32 the rows of R that one block keeps for the "
         << (p.backward ? "backward pass" : "forward pass")
         << " need more registers than it has; bf16 or f16 storage "
            "(--precision=bf16) fits";
  return diag;
}

static cuda::RnnSync syncAttrOf(int sync) {
  switch (sync) {
  case layout::kSyncBlock:
    return cuda::RnnSync::Block;
  case layout::kSyncCluster:
    return cuda::RnnSync::Cluster;
  default:
    return cuda::RnnSync::Grid;
  }
}

cuda::RnnAttr rnnKernelAttr(MLIRContext *context, const RnnPlan &plan) {
  return cuda::RnnAttr::get(context, syncAttrOf(plan.sync), plan.batchTile,
                            plan.blocksPerGroup, plan.splits);
}

FailureOr<RnnPlan> rnnPlanOf(FusionOp fusion, Operation *op,
                             const RnnProblem &p,
                             const CodegenOptions &options) {
  Attribute recorded = fusion->getAttr(cuda::kKernelAttrName);
  if (!recorded)
    return selectRnn(op, p, options);
  auto error = [&]() {
    return fusion.emitOpError() << cuda::kKernelAttrName << ": ";
  };
  auto attr = dyn_cast<cuda::RnnAttr>(recorded);
  if (!attr)
    return error() << "an rnn fusion's kernel is a #kiln_cuda.rnn, got "
                   << recorded;
  const GpuTarget &target = options.target();
  int bt = int(attr.getBatchTile()), ks = int(attr.getSplits());
  int64_t k = attr.getBlocks();
  // Past the registers it spills, as the search's relaxed plans do.
  std::string why;
  std::optional<RnnPlan> plan =
      scoreRnnPlan(p, target, bt, k, ks, /*relaxed=*/false, &why);
  if (!plan)
    plan = scoreRnnPlan(p, target, bt, k, ks, /*relaxed=*/true, &why);
  if (!plan)
    return error() << why;
  if (syncAttrOf(plan->sync) != attr.getSync())
    return error() << "the " << k << " blocks of a group meet in a "
                   << cuda::stringifyRnnSync(syncAttrOf(plan->sync)) << " on "
                   << target.arch << ", not a "
                   << cuda::stringifyRnnSync(attr.getSync());
  return *plan;
}

} // namespace mlir::kiln::codegen
