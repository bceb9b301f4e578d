//===- ComposedReduction.h - planning composed reductions ---------*- C++
//-*-===//
//
// Kernels of reduction fusions that ReductionPlan describes: primitive
// reductions with element-wise prologue and epilogue ops. Element values
// are C statements from ScalarEmitter evaluated at an element of a reduced
// space (flat index `off` or `f`), row values statements evaluated once per
// row (index `o` or `row`), with each reduction's result bound to a
// variable rounded to its element type, as the reference interpreter
// rounds every op's result.
//
// - Generic form (one stage, no element value uses a result): the generic
//   reduction kernel (kiln/reduce_dims.cuh) computes the prologue while
//   loading each element, stores element outputs there, and stores the row
//   outputs from the final accumulators.
// - Row form: a row kernel walks each row once per stage (from registers
//   when the row fits), reduces, computes the row values the next stage or
//   the stores need once per row, and finally stores the row's outputs.
// - Multi-tensor form: the blocks of one kernel are partitioned among the
//   segments (a tensor, or tensors read together; constant tables fixed at
//   compile time); each block reduces a fixed chunk of its segment and
//   writes one partial per reduction; one block then combines each
//   reduction's partials in block order, evaluates the scalar epilogue and
//   stores it. Segments whose code is the same (the statistics of every
//   gradient) share it: their pointers and sizes come from tables, so the
//   kernel does not grow with the number of tensors. Small inputs take a
//   single block and a single launch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CUDA_REDUCTION_COMPOSEDREDUCTION_H
#define KILN_CODEGEN_CUDA_REDUCTION_COMPOSEDREDUCTION_H

#include "codegen/cuda/reduction/ReductionKernels.h"
#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "kiln/reduce_layout.cuh"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::kiln::codegen::reduction {

/// Threads of multi-tensor blocks; up to kSingleBlockElements elements in
/// all, one block does everything (kiln/reduce_layout.cuh).
constexpr int64_t kThreads = ::kiln::reduce::kMultiThreads;
constexpr int64_t kSingleBlockElements =
    ::kiln::reduce::kMultiSingleBlockElements;

inline llvm::ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
inline Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Coordinate `d` of the row-major flat index `flat` in `shape`.
inline std::string coordinate(llvm::ArrayRef<int64_t> shape, size_t d,
                              llvm::StringRef flat) {
  int64_t stride = 1;
  for (size_t k = d + 1; k < shape.size(); ++k)
    stride *= shape[k];
  std::string e = flat.str();
  if (stride != 1)
    e = "(" + e + " / " + indexLiteral(stride) + ")";
  if (d > 0)
    e += " % " + indexLiteral(shape[d]);
  return e;
}

/// A ScalarEmitter over `shape` evaluating at flat index `flat`, whose
/// coordinates are declared from it on demand.
class Scope {
public:
  Scope(llvm::ArrayRef<int64_t> shape, std::string prefix, std::string flat)
      : shape(shape), prefix(prefix), flat(std::move(flat)),
        emitter(shape, prefix, "idx_t") {
    llvm::SmallVector<std::string> names;
    for (size_t d = 0; d < shape.size(); ++d)
      names.push_back(this->prefix + "c" + std::to_string(d));
    emitter.setIndex(names, this->flat);
  }

  /// Starts a new C scope (a loop body): earlier statements are forgotten.
  void reset() {
    emitter.resetScope();
    emitter.clearUsage();
  }
  /// Declarations of the coordinates the statements since reset() used.
  std::string coordinates(int spaces) const {
    std::string s;
    for (size_t d = 0; d < shape.size(); ++d)
      if (emitter.usesCoord(d))
        s += std::string(spaces, ' ') + "const idx_t " + prefix + "c" +
             std::to_string(d) + " = " + coordinate(shape, d, flat) + ";\n";
    return s;
  }

  llvm::SmallVector<int64_t> shape;
  std::string prefix, flat;
  ScalarEmitter emitter;
};

/// Plans the kernels of one composed reduction fusion (the forms above:
/// ComposedGeneric.cpp, ComposedRows.cpp, ComposedMultiTensor.cpp).
class Composer {
public:
  Composer(FusionOp fusion, const ReductionPlan &plan, int64_t targetBlocks,
           std::optional<int64_t> splits = std::nullopt)
      : fusion(fusion), plan(plan), body(fusion.getBody().front()),
        kernels(header(fusion), fusion, targetBlocks) {
    kernels.splits = splits;
    for (auto [i, v] : llvm::enumerate(body.getTerminator()->getOperands()))
      resultIndices[v].push_back(i);
    findCopies();
  }

  FailureOr<GeneratedFusion> run() {
    LogicalResult result = success();
    if (plan.form == ReductionPlan::Form::MultiTensor)
      result = emitMultiTensor();
    else if (plan.needsRowKernel)
      result = emitRows();
    else
      result = emitGeneric();
    if (failed(result))
      return failure();
    return kernels.builder.take();
  }

private:
  static std::string header(FusionOp fusion) {
    llvm::MapVector<llvm::StringRef, unsigned> counts;
    for (Operation &op : fusion.getBody().front().without_terminator())
      ++counts[op.getName().stripDialect()];
    std::string text = "// kiln reduction fusion of ";
    for (auto [i, entry] : llvm::enumerate(counts))
      text += (i ? ", " : "") + entry.first.str() +
              (entry.second > 1 ? " x" + std::to_string(entry.second) : "");
    return text + "\n";
  }

  //===--------------------------------------------------------------------===//
  // Names, parameters, reads
  //===--------------------------------------------------------------------===//

  static std::string inName(unsigned i) { return "in" + std::to_string(i); }
  static std::string outName(unsigned i) { return "out" + std::to_string(i); }

  void addInput(Params &params, unsigned i) const {
    params.add("const " + cudaType(body.getArgument(i)) + " *__restrict__ " +
                   inName(i),
               LaunchArg::operand(i));
  }
  void addOutputs(Params &params, Value v) const {
    for (unsigned i : resultIndices.lookup(v))
      params.add(cudaType(v) + " *__restrict__ " + outName(i),
                 LaunchArg::result(i));
  }
  /// Stores of `expr` into every result that yields `v`, at index `at`.
  std::string stores(Value v, llvm::StringRef expr, llvm::StringRef at,
                     int spaces) const;

  /// The block arguments evaluating `roots` reads, not looking through the
  /// values `stop` accepts.
  llvm::SmallVector<unsigned>
  inputsRead(llvm::ArrayRef<Value> roots,
             llvm::function_ref<bool(Value)> stop) const;

  bool isReductionResult(Value v) const {
    Operation *op = v.getDefiningOp();
    return op && isPrimitiveReduction(op);
  }
  /// Values read once per row at the elements: bound, not evaluated there.
  bool isBoundRowValue(Value v) const {
    return isReductionResult(v) || plan.isRowValue(v);
  }

  void bindInputs(Scope &scope) const {
    for (BlockArgument arg : body.getArguments())
      scope.emitter.bindBuffer(arg, inName(arg.getArgNumber()));
  }

  //===--------------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------------===//

  static bool isInt(Operation *r) {
    return elementTypeOf(r->getOperand(0)).isInteger(32);
  }

  /// The accumulator of reduction `r` taking `element` (a compute value).
  static Accumulator accumulator(Operation *r, const std::string &element);

  /// The declaration of reduction `r`'s result `name` from its final
  /// accumulator: the mean divides, i32 sums convert back, and a bf16/f16
  /// result is rounded once (as the reference rounds the reduction).
  std::string resultDecl(Operation *r, llvm::StringRef acc,
                         llvm::StringRef name, int spaces) const;

  /// The 32-entry shared scratch of accumulators of `type` (float's comes
  /// with the row kernel's prologue).
  static std::string scratchOf(llvm::StringRef type) {
    if (type == "float")
      return "kiln_scratch";
    return type == "unsigned" ? "kiln_scratch_u" : "kiln_scratch_i";
  }
  static std::string scratchDecls(llvm::ArrayRef<Accumulator> accs,
                                  bool withFloat);

  //===--------------------------------------------------------------------===//
  // Reductions computed twice
  //===--------------------------------------------------------------------===//

  /// Whether `a` and `b` hold the same values: the same value, or results of
  /// the same op (name, attributes, type) on operands that do.
  bool equivalent(Value a, Value b);

  /// Maps every reduction that computes the same as an earlier one of its
  /// space (the same kind over the same dims, so only keepdim may differ, of
  /// equivalent inputs: the statistics and a clip by global norm both sum
  /// the squares of every gradient) to that one: it is accumulated once.
  void findCopies();
  /// The reductions of `space` that are accumulated, in block order.
  llvm::SmallVector<Operation *> distinct(const ReductionSpace &space) const {
    llvm::SmallVector<Operation *> out;
    for (Operation *r : space.reductions)
      if (!sameAs.count(r))
        out.push_back(r);
    return out;
  }
  /// `r` and the reductions that compute the same.
  llvm::SmallVector<Operation *> copiesOf(Operation *r) const {
    llvm::SmallVector<Operation *> out = {r};
    for (auto [copy, original] : sameAs)
      if (original == r)
        out.push_back(copy);
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Generic form
  //===--------------------------------------------------------------------===//

  LogicalResult emitGeneric();

  //===--------------------------------------------------------------------===//
  // Row form
  //===--------------------------------------------------------------------===//

  /// Computes, once per row into `out`, the row values that evaluating
  /// `roots` at the elements reads, and binds them in `element`.
  LogicalResult bindRowValues(llvm::ArrayRef<Value> roots, Scope &row,
                              Scope &element, std::string &out);

  LogicalResult emitRows();

  //===--------------------------------------------------------------------===//
  // Multi-tensor form
  //===--------------------------------------------------------------------===//

  /// The code of one segment (space) of a multi-tensor reduction, written
  /// with names local to it: its inputs a<k> and outputs o<k> (pointers the
  /// kernel picks per segment), its accumulators acc<k>, the segment's
  /// element count `n`, block `b` of `blocks`, and the offsets `pbase_<t>` of
  /// its partials of type t. Segments whose code is the same text share it.
  struct SegmentCode {
    std::string globals, body;
    llvm::SmallVector<unsigned> inputs;  // fusion operand of a<k>
    llvm::SmallVector<unsigned> outputs; // fusion result of o<k>
    std::vector<Accumulator> accs;
  };

  static std::string typeLetter(llvm::StringRef type) {
    return type == "float" ? "f" : type == "unsigned" ? "u" : "i";
  }

  FailureOr<SegmentCode> segmentCode(unsigned s, llvm::StringRef prefix,
                                     int64_t chunk);

  /// The row values (scalars) from the final accumulators acc<k> of the
  /// distinct reductions, stored by thread 0.
  FailureOr<std::string> scalarEpilogue(std::string &globals);

  /// A table `static __device__ const unsigned name[] = {...};`.
  static std::string table(llvm::StringRef name,
                           llvm::ArrayRef<int64_t> values);

  LogicalResult emitMultiTensor();

  FusionOp fusion;
  const ReductionPlan &plan;
  Block &body;
  KernelSet kernels;
  llvm::DenseMap<Value, llvm::SmallVector<unsigned>> resultIndices;
  llvm::DenseMap<std::pair<Value, Value>, bool> equivalence;
  llvm::DenseMap<Operation *, Operation *> sameAs;
};

} // namespace mlir::kiln::codegen::reduction

#endif // KILN_CODEGEN_CUDA_REDUCTION_COMPOSEDREDUCTION_H
