//===- ReductionKernels.h - planning reduction kernels -----------*- C++
//-*-===//
//
// The pieces the "reduction" fusion kind is planned from (see
// ReductionEmitter.cpp). The kernels are the templates of
// codegen/cuda/kernels/ (reduce_common.cuh: combiners and the group
// reduction; reduce_row.cuh: a group of threads per contiguous row;
// reduce_dims.cuh: the generic reduction over any dims, row or column mode,
// split over blocks with a fixed-order second pass; reduce_multi_tensor.cuh;
// softmax.cuh, norm.cuh, cross_entropy.cuh); their layout arithmetic is
// reduce_layout.cuh's, which these planners include too. Every kernel
// accumulates in f32 (i32 sums wrap) with fixed reduction trees: results are
// deterministic run to run, and no atomics are used.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_REDUCTION_REDUCTIONKERNELS_H
#define KILN_CODEGEN_CUDA_REDUCTION_REDUCTIONKERNELS_H

#include "codegen/cuda/EmitterUtils.h"
#include "codegen/cuda/GpuTarget.h"
#include "compiler/transforms/ReductionPlan.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln::codegen::reduction {

using Params = FusionBuilder::Params;

inline std::string str(int64_t v) { return std::to_string(v); }
inline std::array<uint32_t, 3> dim3Of(int64_t x, int64_t y = 1, int64_t z = 1) {
  return {uint32_t(x), uint32_t(y), uint32_t(z)};
}
/// `body` with every line indented by `spaces`.
std::string indent(llvm::StringRef body, int spaces);

/// The kernels of one reduction fusion: the index type (`idx_t`, int when
/// every tensor is small enough) and the blocks that fill the target GPU.
class KernelSet {
public:
  /// Kernels sized for `targetBlocks` blocks (targetBlocksOf the target,
  /// or as #kiln_cuda.row_reduction records).
  KernelSet(std::string header, FusionOp fusion, int64_t targetBlocks);

  /// Adds the kernel of `spec` with `params` (declarations "type name"):
  /// its functors start with the `idx_t` typedef, and it includes
  /// kiln/reduce_common.cuh besides its own templates.
  void kernel(KernelSpec spec, const Params &params);

  FusionBuilder builder;
  /// "int" or "long long".
  std::string idx;
  /// Blocks the kernels fill: by default targetBlocksOf's, which keep every
  /// SM busy about twice over.
  int64_t targetBlocks;
  static int64_t targetBlocksOf(const GpuTarget &target) {
    return target.blocksForWaves(2);
  }
  /// The generic reduction's splits as the fusion's #kiln_cuda.reduction
  /// records them (checked); plannedSplits' when none.
  std::optional<int64_t> splits;
};

/// GROUP threads per row of M contiguous elements (kiln/reduce_row.cuh); the
/// per-row tensors are read into registers when at most 16 elements fall to
/// each thread. With a vector width W > 1 each thread takes W consecutive
/// elements per step, moved with 16-byte accesses when the row is aligned
/// and one by one otherwise (the same elements per thread either way, so
/// results do not depend on alignment). This writes the statements of a row
/// kernel's body that use the template's pieces; the layout is
/// kiln::reduce::row_config's.
struct RowKernel {
  int64_t rows, m, group, rowsPerBlock, perThread, threads, blocks;
  int64_t width;
  bool cached;
  struct RowInput {
    std::string value, pointer, type;
  };
  /// Row-major [rows, M] inputs: value name, pointer parameter name and
  /// storage type.
  std::vector<RowInput> rowInputs;

  RowKernel(int64_t rows, int64_t m, int64_t width = 1);

  void addRowInput(std::string value, std::string pointer,
                   std::string type = "float") {
    rowInputs.push_back(
        {std::move(value), std::move(pointer), std::move(type)});
  }

  /// `kiln::reduce::row_config<idx_t, rows, M, W>`.
  std::string config() const;
  /// The line of --stats.
  std::string configuration() const;

  /// Row index (`row`, `lid`, `active`), row inputs `<value>_in` (read into
  /// registers when cached) and the float scratch `kiln_scratch`.
  /// `outputs` are pointer parameters of [rows, M] results that get a
  /// `<name>_row` pointer. With W > 1, `aligned` says whether every row
  /// input is.
  std::string prologue(llvm::ArrayRef<std::string> outputs = {}) const;
  /// A loop over the row's elements binding `j` and each row input's value.
  /// With W > 1, `stepEnd` runs after the W elements of a step starting at
  /// `j0` (`e` indexes them in `body`).
  std::string loop(llvm::StringRef body, llvm::StringRef stepEnd = "") const;
  /// Combines `var` over the row's threads; `scratch` is a 32-entry shared
  /// array of its type (the prologue declares the float `kiln_scratch`).
  std::string reduce(llvm::StringRef var, llvm::StringRef op,
                     llvm::StringRef identity,
                     llvm::StringRef scratch = "kiln_scratch") const;

  std::array<uint32_t, 3> grid() const { return dim3Of(blocks); }
  std::array<uint32_t, 3> block() const { return dim3Of(threads); }
};

/// A run of adjacent input dims that are all kept or all reduced.
struct DimGroup {
  int64_t size, stride;
};

/// An input shape reduced over some dims, collapsed into alternating kept
/// and reduced groups.
struct ReduceLayout {
  std::vector<DimGroup> kept, reduced;
  int64_t rows = 1, length = 1;
  /// The innermost group is reduced (or there is nothing to reduce).
  bool rowMode = true;

  ReduceLayout(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> dims);
};

/// One reduction computed by a generic reduction kernel.
struct Accumulator {
  std::string type;     // C type of the accumulator
  std::string identity; // identity of the combiner
  std::string combiner; // kiln_*_op
  /// The value of the current element (after ReduceSpec::elementCode).
  std::string element;
  int64_t bytes = 4;
};

/// What a generic reduction kernel reduces and stores.
struct ReduceSpec {
  std::string prefix; // kernel name prefix
  std::vector<Accumulator> accs;
  /// Statements run at every element before the accumulators take it: `off`
  /// is the element's offset in the input, `o` its output.
  std::string elementCode;
  /// Stores of element outputs at `off` (run by the thread that owns the
  /// element, exactly once per element).
  std::string elementStores;
  /// Parameters the element loop reads or writes.
  Params elementParams;
  /// Statements that store the results of output `o` from the final
  /// accumulators (named by accName).
  std::string finish;
  /// Parameters the finish reads or writes.
  Params finishParams;
  /// Namespace-scope definitions the statements use (constant tables).
  std::string helpers;

  /// The variable of accumulator `k`.
  std::string accName(size_t k) const {
    return accs.size() == 1 ? std::string("acc") : "acc" + str(k);
  }
};

/// The blocks the generic reduction splits each output's reduced range over
/// (1: no split): as many as fill `targetBlocks` (four times over in
/// column mode), in chunks of at least kRowMinChunk or kColumnMinChunk
/// elements.
int64_t plannedSplits(const ReduceLayout &layout, int64_t targetBlocks);

/// Why the generic reduction cannot split `layout`'s reduced range over
/// `splits` blocks; empty if it can.
std::string splitsMismatch(const ReduceLayout &layout, int64_t splits);

/// Emits the generic reduction: rows of contiguous reduced elements (row
/// mode) or coalesced columns (column mode), split over blocks with a
/// second, fixed-order pass when the outputs alone do not fill the GPU
/// (`kernels.splits`, else plannedSplits).
void emitReduce(KernelSet &kernels, const ReduceSpec &spec,
                const ReduceLayout &layout);

/// Emits a composed reduction fusion (anything but a single reduction op
/// with its operands): the generic reduction with prologue and epilogue, a
/// row kernel, or a multi-tensor reduction, as `plan` says, sized for
/// `targetBlocks` (KernelSet); the generic reduction split as `splits` says
/// when given.
FailureOr<GeneratedFusion>
emitComposedReduction(FusionOp fusion, const ReductionPlan &plan,
                      int64_t targetBlocks,
                      std::optional<int64_t> splits = std::nullopt);

/// The type and name of a parameter declaration "type name".
std::pair<std::string, std::string> splitDecl(llvm::StringRef decl);

/// `struct name { <decls>; };` members of `params`, and the braced
/// initializer of such a struct from the parameters of the same names.
std::string paramMembers(const Params &params);
std::string paramInit(const Params &params);

} // namespace mlir::kiln::codegen::reduction

#endif // KILN_CODEGEN_CUDA_REDUCTION_REDUCTIONKERNELS_H
