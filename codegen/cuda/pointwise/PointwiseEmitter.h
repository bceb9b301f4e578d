//===- PointwiseEmitter.h - plans of pointwise and optimizer kernels -*- C++
//-*-===//
//
// The pointwise emitter plans: it partitions a fusion's results into groups
// of one root shape each, chooses each group's vector width, the kernels'
// block size and block ranges for the GpuTarget, and turns each kernel into
// a KernelSpec of kernels/pointwise.cuh (one group) or kernels/optimizer.cuh
// (several). The device code of a group (its functor) is written by
// PointwiseFunctors.cpp. The template instances (TemplateInstances.h) render
// kernels through the same functions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_POINTWISE_POINTWISEEMITTER_H
#define KILN_CODEGEN_CUDA_POINTWISE_POINTWISEEMITTER_H

#include "codegen/cuda/KernelRenderer.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace mlir::kiln::codegen::pointwise {

/// One pointwise computation: results of one root shape.
struct Group {
  SmallVector<int64_t> shape;
  SmallVector<unsigned> results;
  int64_t elements = 0;
  /// Fusion inputs it reads (block argument numbers, ascending).
  SmallVector<unsigned> inputs;
  /// Inputs read element for element at the root's flat index (vector
  /// candidates), and whether everything is read and written like that or
  /// once.
  llvm::DenseSet<Value> laneInputs;
  /// Lane inputs a rope at the root rotates, by their last dimension D:
  /// the vector path also loads each step's rotation partners (the V
  /// elements D/2 away), so D/2 must be a multiple of the width.
  llvm::DenseMap<Value, int64_t> pairInputs;
  bool vectorizable = true;
  /// Elements per thread step on the vector path; 1: the scalar loop only.
  int width = 1;
};

/// One kernel: its groups, their block ranges and the block size.
struct KernelPlan {
  SmallVector<Group> groups;
  /// C type of indices: int unless some tensor needs 64 bits.
  std::string indexType = "int";
  int64_t threads = 0;
  /// First block of each group, and the total.
  SmallVector<int64_t> starts;
};

/// The groups of a fusion: one root when its results share one, else (a
/// horizontally merged pointwise fusion, or an optimizer) one per shape;
/// nullopt with `why` when it cannot be emitted.
std::optional<SmallVector<Group>> groupsOf(FusionOp fusion, std::string *why);

/// The kernels of `fusion` on `target`, launched one after the other;
/// diagnostics go to the fusion.
FailureOr<std::vector<KernelPlan>> planKernels(FusionOp fusion,
                                               const GpuTarget &target);

/// Block size and block ranges of `plan` from its groups' element counts and
/// widths.
void layOut(KernelPlan &plan, const GpuTarget &target);

/// The spec of one planned kernel.
FailureOr<KernelSpec> kernelSpec(FusionOp fusion, const KernelPlan &plan);

/// The name of fusion input or result `i` in the kernel: a<i> or r<i>.
std::string paramName(bool result, unsigned i);

/// PointwiseFunctors.cpp: the device code of group `index` of `plan`, a
/// struct `name` with the group's pointers (its inputs, then its results,
/// ascending) for kiln::pointwise::grid_stride. File-scope tables its
/// statements use are appended to `globals`.
FailureOr<std::string> groupFunctor(FusionOp fusion, const KernelPlan &plan,
                                    unsigned index, const std::string &name,
                                    std::string &globals);

} // namespace mlir::kiln::codegen::pointwise

#endif // KILN_CODEGEN_CUDA_POINTWISE_POINTWISEEMITTER_H
