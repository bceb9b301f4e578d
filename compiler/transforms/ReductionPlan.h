//===- ReductionPlan.h - how the ops of a reduction fusion compose -*- C++
//-*-===//
//
// A composed reduction fusion holds primitive reductions (reduce_sum,
// reduce_mean, reduce_max, reduce_min) with the element-wise ops that feed
// them and that use their results. This analysis is shared by --kiln-fuse,
// which only forms the groups it accepts, and by the code generator, which
// emits kernels from it, so the two cannot disagree.
//
// Every reduced input shape with its reduced dims is a *space*; a *row* of
// a space is one output element of its reductions (the elements that reduce
// into it). Values are evaluated in two places:
// - at the elements of a space (element values): the reductions' prologue,
//   and element-wise ops that combine per-row results with the row's
//   elements again (exp(x - max) / sum of a softmax), stored while walking
//   the row;
// - once per row (row values): the reductions' results and element-wise
//   ops on them (mean = sum / n, rsqrt(var + eps)).
// A value that uses a reduction's result is *reduction-dependent*. A
// reduction whose input is reduction-dependent runs in a later *stage*.
//
// Two forms:
// - Rows: one space. With one stage and no reduction-dependent element
//   value, any reduced dims (the generic reduction kernel, with the
//   prologue computed while loading and the row values when storing);
//   otherwise the reduced dims must be the innermost ones, and a row kernel
//   keeps each row (in registers when it fits) through every stage.
// - MultiTensor: whole-tensor reductions of several tensors, none reading
//   another's result, whose results meet in scalar row values (a global
//   norm over every gradient): one multi-tensor kernel of per-block partials
//   and one finishing kernel, in a fixed order. Each space is then a
//   segment: the reductions of one tensor (or of tensors whose prologues
//   share an op or an input).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_REDUCTIONPLAN_H
#define KILN_COMPILER_TRANSFORMS_REDUCTIONPLAN_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::kiln {

/// Whether shapes `a` and `b` hold the same elements in the same row-major
/// order (they differ at most in size-1 dims).
bool sameElements(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// reduce_sum, reduce_mean, reduce_max or reduce_min.
bool isPrimitiveReduction(Operation *op);
/// The `dims` attribute of a primitive reduction.
llvm::ArrayRef<int64_t> reducedDimsOf(Operation *op);
/// A primitive reduction over every element (one result element).
bool isWholeTensorReduction(Operation *op);
/// Whether two primitive reductions may share a plan: the same input shape
/// and reduced dims (one space), or both whole-tensor (MultiTensor).
bool reductionsMayShareAPlan(Operation *a, Operation *b);

/// An input shape reduced over some dims, and the reductions doing so.
struct ReductionSpace {
  llvm::SmallVector<int64_t> shape;
  /// The reduced dims of size > 1, ascending (size-1 dims do not matter).
  llvm::SmallVector<int64_t> dims;
  /// Its reductions, in block order.
  llvm::SmallVector<Operation *> reductions;
  /// Values stored at every element of the space (element outputs).
  llvm::SmallVector<Value> elementOutputs;

  int64_t elements() const;
  /// Number of rows (outputs of the reductions) and elements of one row.
  int64_t rows() const;
  int64_t rowLength() const;
  /// The reduced dims are the innermost ones (ignoring size-1 dims): row r
  /// holds elements [r * rowLength, (r + 1) * rowLength).
  bool innermost() const;
  /// The shape with the reduced dims set to 1.
  llvm::SmallVector<int64_t> rowShape() const;
};

struct ReductionPlan {
  enum class Form { Rows, MultiTensor };
  Form form = Form::Rows;
  /// Rows: exactly one.
  llvm::SmallVector<ReductionSpace> spaces;
  /// Stage of every reduction (0 first); stages() of them.
  llvm::DenseMap<Operation *, unsigned> stageOf;
  unsigned numStages = 1;
  /// Values (results of the planned ops) that use a reduction's result.
  llvm::DenseSet<Value> reductionDependent;
  /// Outputs stored once per row, in output order.
  llvm::SmallVector<Value> rowOutputs;
  /// Rows form only: a row kernel is needed (several stages, or element
  /// values that use reduction results).
  bool needsRowKernel = false;

  /// Whether `v` is computed once per row: a reduction-dependent value with
  /// one element per row (or a single element).
  bool isRowValue(Value v) const;
  /// The space a reduction belongs to.
  const ReductionSpace &spaceOf(Operation *reduction) const;
};

/// Plans `ops` (in block order: primitive reductions and element-wise ops)
/// whose values in `outputs` are needed outside. Fails, saying why in `why`,
/// when no kernel shape covers them.
FailureOr<ReductionPlan> planReduction(llvm::ArrayRef<Operation *> ops,
                                       llvm::ArrayRef<Value> outputs,
                                       std::string *why = nullptr);

/// Plans the body of a "reduction" fusion (its yielded values as outputs).
FailureOr<ReductionPlan> planReduction(FusionOp fusion,
                                       std::string *why = nullptr);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_REDUCTIONPLAN_H
