//===- RemapChains.cpp - layout ops inside pointwise kernels --------------===//
//
// A pointwise kernel computes each element of its root from the elements of
// its operands; an index-remapping op (transpose, slice, flip, pad, concat,
// reshape, rope, embedding) reads its operands at other positions. When an
// operand is itself computed element-wise, the kernel can compute it at
// those positions instead of reading it from a buffer that a kernel of its
// own wrote: a chain such as scale -> rope -> scale -> transpose, or the
// slices, pads and adds of a gate's gradient, becomes one loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/transforms/FusionSteps.h"

#include "compiler/transforms/OpClasses.h"

namespace mlir::kiln {

/// Positions evaluated per root element at most (rope reads two per
/// element; a rope of a rope four). Recomputing cheap element-wise ops is
/// far cheaper than a launch, but not without bound.
static constexpr int64_t kMaxFanOut = 4;

bool canComputeAtRemappedPositions(Operation *producer, Operation *reader,
                                   const Group &group, int64_t &fanOut) {
  // Computed at remapped positions, it cannot also be stored as a result.
  for (Operation *user : producer->getUsers())
    if (user != reader && !group.ops.contains(user))
      return false;
  // A reshape (a view) only joins to reach the ops that compute its operand.
  if (classify(producer) == OpClass::View) {
    Operation *source = producer->getOperand(0).getDefiningOp();
    if (!source || isa<ConstantOp>(source) ||
        (classify(source) != OpClass::Pointwise &&
         classify(source) != OpClass::Gather))
      return false;
  }
  int64_t reads = remappedReadsPerElement(reader);
  if (fanOut * reads > kMaxFanOut)
    return false;
  fanOut *= reads;
  return true;
}

} // namespace mlir::kiln
