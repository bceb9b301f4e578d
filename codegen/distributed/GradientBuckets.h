//===- GradientBuckets.h - gradient all-reduces of data parallelism -*- C++
//-*-===//
//
// Plans the communication of data-parallel training on a generated module
// (kilnc --data-parallel): in each entry that computes gradients
// (forward_backward, train_step), the gradients are grouped into buckets in
// the order the backward finishes them (the last layer's first), as
// PyTorch's DistributedDataParallel groups them: a bucket is closed once it
// holds at least its size (the first `firstBucketBytes`, 1 MiB, so that the
// first all-reduce starts early; the others `bucketBytes`, 25 MiB). Each
// bucket's all-reduce (average) is issued right after the launch that
// finishes its last gradient, on a second stream, and the first launch that
// reads any of its gradients afterwards (a gradient transform, the
// optimizer) waits for it: communication overlaps the rest of the backward,
// and everything after it sees the averaged gradients.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_DISTRIBUTED_GRADIENTBUCKETS_H
#define KILN_CODEGEN_DISTRIBUTED_GRADIENTBUCKETS_H

#include "codegen/cuda/ModuleCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

namespace mlir::kiln::codegen {

struct BucketOptions {
  uint64_t bucketBytes = 25ull << 20;
  uint64_t firstBucketBytes = 1ull << 20;
};

/// Buckets over tensors of `bytes` (in production order), as index ranges:
/// tensors are added in order and a bucket closes once it holds at least its
/// size; a tensor larger than a bucket forms one of its own. `mayJoin(i)`
/// false closes the open bucket before tensor i.
std::vector<std::vector<size_t>>
assignBuckets(ArrayRef<uint64_t> bytes, const BucketOptions &options,
              llvm::function_ref<bool(size_t)> mayJoin = nullptr);

/// Plans the collectives of forward_backward (over the gradients it
/// returns) and of train_step (over the same gradients; run splitTrainStep
/// first, so that they are complete in memory before the update). Fails,
/// with a diagnostic at the entry's function in `module`, when a gradient is
/// not written by any launch, or is read inside the kernel that computes it
/// (so that no all-reduce can come in between).
LogicalResult planGradientBuckets(CompiledModule &compiled, ModuleOp module,
                                  const BucketOptions &options);

/// The plan as `kilnc --stats` prints it: per entry, each bucket's bytes,
/// tensors, the launch it follows and the launch that waits for it.
void printBucketPlan(const CompiledModule &compiled, llvm::raw_ostream &os);

} // namespace mlir::kiln::codegen

#endif // KILN_CODEGEN_DISTRIBUTED_GRADIENTBUCKETS_H
