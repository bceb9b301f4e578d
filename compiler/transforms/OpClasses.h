//===- OpClasses.h - how kiln ops map onto kernels --------------*- C++ -*-===//
//
// The classification the fusion pass and the code generator share: which ops
// compute each element independently (and so fuse into one loop), which read
// their data operands at remapped indices, which reduce, and which need a
// dedicated kernel of their own. The ops carry it as traits and interfaces
// (the op classes of dialects/kiln/IR/KilnBase.td); these functions read
// them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_OPCLASSES_H
#define KILN_COMPILER_TRANSFORMS_OPCLASSES_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {

enum class OpClass {
  /// Element i of the result needs only element i (numpy-broadcast) of each
  /// operand: elementwise ops, constants, iota, random ops, broadcast_to,
  /// dropout, triu, tril (trait Kiln_Pointwise).
  Pointwise,
  /// Pointwise over the result, but operands are read at remapped indices,
  /// from buffers or computed there (transpose, slice, pad, concat, rope,
  /// embedding...; trait Kiln_Layout).
  Gather,
  /// Changes only the shape of a contiguous buffer: no kernel, an alias
  /// (reshape; trait Kiln_View).
  View,
  /// Reduces over dims or rows: reductions, softmax, norms, losses (trait
  /// Kiln_Reduces).
  Reduction,
  /// A matmul, whose element-wise consumers can be fused as an epilogue
  /// (trait Kiln_Gemm).
  Gemm,
  /// Ops with a kernel family of their own: attention, rnn, conv, pooling,
  /// batch norm, embedding gradient (trait Kiln_DedicatedKernel).
  Dedicated,
  /// Not a kiln compute op (func.return, kiln.fusion, kiln.yield, ...).
  Other,
};

OpClass classify(Operation *op);

/// The fusion kind of an op that becomes a kernel by itself: "pointwise",
/// "reduction", "gemm", or the kind a dedicated op names ("attention",
/// "rnn", "conv", "pool", "resize", "batch_norm", "embedding").
llvm::StringRef fusionKindOf(Operation *op);

/// Whether `op` reads its data operands at remapped positions (layout ops
/// and reshape: RemapsOperandsOpInterface).
bool remapsOperands(Operation *op);

/// Positions of its data operand that `op` reads per result element (rope
/// reads two: each element and its rotation partner; the other remapping
/// ops one; 1 for ops that do not remap).
int64_t remappedReadsPerElement(Operation *op);

/// The element-wise ops that the updated parameters and optimizer state of a
/// training entry (results marked kiln.updates) are computed from, up to the
/// first op that is not element-wise: the multi-tensor optimizer kernel's.
llvm::DenseSet<Operation *> optimizerUpdateOps(func::FuncOp function);

/// The arguments of a training entry that its results overwrite in place:
/// the parameters and state their updates (results marked kiln.updates)
/// are written over.
llvm::SmallPtrSet<Value, 4> argumentsUpdatedInPlace(func::FuncOp function);

/// Whether `op` reads one of `arguments` through a view (or is a view of
/// one): at other positions than its own elements, in another shape.
bool readsThroughView(Operation *op,
                      const llvm::SmallPtrSet<Value, 4> &arguments);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_OPCLASSES_H
