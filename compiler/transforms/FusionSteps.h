//===- FusionSteps.h - grouping steps of --kiln-fuse ------------*- C++ -*-===//
//
// The grouping steps that live in files of their own; Fusion.cpp runs them
// in order with its own (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TRANSFORMS_FUSIONSTEPS_H
#define KILN_COMPILER_TRANSFORMS_FUSIONSTEPS_H

#include "compiler/transforms/FusionGroups.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kiln {

/// Moves every reshape (a view) down to just before its first reader
/// (SinkViews.cpp), so that the grouping steps, which read position as
/// order, see no reader of a result before the ops that actually read it.
void sinkViews(Block &body);

/// Lets every matmul operand that a transpose of its last two dimensions
/// defines read the transpose's input with its transpose flag toggled, and
/// erases the transposes no other op reads (TransposedOperands.cpp): the
/// GEMM takes the operand M- or N-major instead of a copy.
void foldTransposedOperands(Block &body);

/// Replaces every matmul over K = 1 (an outer product) by the broadcast
/// multiply of its operands, which computes the same elements with the same
/// single rounding (OuterProducts.cpp): it then fuses as a pointwise op.
void rewriteOuterProducts(Block &body);

/// Replaces every matmul with one result row or column over K > 1 (a
/// matrix-vector product) by the broadcast multiply of its operands, widened
/// to f32, summed over K and rounded once (VectorProducts.cpp): it then
/// fuses as one reduction kernel.
void rewriteVectorProducts(Block &body);

/// Lets every attention_backward op whose `out` is the result of an
/// attention op of the same operands, mask and scale read that op's row
/// log-sum-exp, which the forward op then yields (AttentionRowLse.cpp): the
/// backward kernels skip the sweep that would recompute it.
void pairAttentionRowLse(Block &body);

/// Groups every attention and attention_backward op with the transposes
/// between it and memory (AttentionLayouts.cpp): a transpose of [B, T, H, D]
/// into the op's [B, H, T, D] operand, or of its result back, that keeps the
/// head dim innermost only changes the strides the kernel reads and writes
/// with, so it costs no kernel of its own. Transposes that other ops also
/// use are duplicated; a result stored transposed is read back by the other
/// attention ops through the inverse transpose (an exact rewrite: layout ops
/// move data only).
void formAttentionGroups(Block &body, Grouping &grouping);

/// Roots a gemm group at every matmul and extends it by the element-wise
/// ops that consume its result, with the element-wise side computations
/// only they need, and by matmuls of the same shape whose products it adds
/// (GemmEpilogues.cpp); moves ops that would stand between the matmul and
/// its epilogue below it when nothing before needs them.
void formGemmGroups(func::FuncOp function, Grouping &grouping);

/// Roots a conv group at every convolution (forward or either gradient) and
/// extends it by its element-wise epilogue as formGemmGroups does.
void formConvGroups(func::FuncOp function, Grouping &grouping);

/// Groups each cross_entropy with the cross_entropy_backward of the same
/// logits, labels and attributes (LossGradients.cpp) when the backward's
/// incoming gradient does not depend on the loss and everything that uses
/// the loss comes after the backward: one kernel computes both from one read
/// of each row.
void formLossGradientGroups(Block &body, Grouping &grouping);

/// The adds of `body` that add products of matmuls (or sums of them): a
/// gemm group holding one computes one product over the concatenated K of
/// its matmuls. Found in one walk, since asking op by op walks a long chain
/// of adds (the residual stream's gradient) once per op.
llvm::DenseSet<Operation *> sumsOfProducts(Block &body);

/// Whether a pointwise group may take `producer`, whose result an
/// index-remapping op of the group reads at remapped positions
/// (RemapChains.cpp): the kernel then evaluates the producer at those
/// positions instead of reading a buffer. Only when nothing outside the
/// group uses it, and when the positions evaluated per element stay few
/// (`fanOut` of the group so far, per root element; updated on success).
bool canComputeAtRemappedPositions(Operation *producer, Operation *reader,
                                   const Group &group, int64_t &fanOut);

/// Merges groups that can run as one launch (HorizontalFusion.cpp): gemm
/// groups of equal problem shape that share an operand, and independent
/// pointwise groups (neither reading what the other updates in place), when
/// the merged kernel can stand at the last member.
void mergeHorizontalGroups(func::FuncOp function, Grouping &grouping);

} // namespace mlir::kiln

#endif // KILN_COMPILER_TRANSFORMS_FUSIONSTEPS_H
