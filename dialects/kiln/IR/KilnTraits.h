//===- KilnTraits.h - native op traits of the kiln dialect ------*- C++ -*-===//
//
// The marks of KilnBase.td: differentiability, and the op class that says
// how an op maps onto kernels (one per op; compiler/transforms/OpClasses.h
// reads them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_IR_KILNTRAITS_H
#define KILN_DIALECTS_KILN_IR_KILNTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::kiln {
/// The largest tensor one device buffer may hold, in bytes (the artifact's
/// arena limit).
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 48;

/// Checks that every statically shaped tensor among `op`'s operands and
/// results has a byte size that fits kMaxTensorBytes; an error at the op
/// naming the value and its type otherwise.
LogicalResult verifyTensorSizes(Operation *op);
} // namespace mlir::kiln

namespace mlir::OpTrait::kiln {

/// Every kiln op: its tensors fit a device buffer (the user's op says so,
/// before any pass computes a size that overflows).
template <typename ConcreteType>
class BoundedTensorSizes : public TraitBase<ConcreteType, BoundedTensorSizes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return ::mlir::kiln::verifyTensorSizes(op);
  }
};

/// Marks an op through which no gradient flows (the autodiff pass gives its
/// operands a zero gradient).
template <typename ConcreteType>
class NonDifferentiable : public TraitBase<ConcreteType, NonDifferentiable> {};

/// Op class: element i of the result reads only element i (numpy-broadcast)
/// of each operand, and possibly its own position (iota, random ops,
/// dropout, triu, tril).
template <typename ConcreteType>
class Pointwise : public TraitBase<ConcreteType, Pointwise> {};

/// Op class: pointwise over the result, but the operands are read at
/// remapped positions (RemapsOperandsOpInterface).
template <typename ConcreteType>
class Layout : public TraitBase<ConcreteType, Layout> {};

/// Op class: changes only the shape of a contiguous buffer (an alias, no
/// kernel).
template <typename ConcreteType>
class View : public TraitBase<ConcreteType, View> {};

/// Op class: reduces over dims or rows (reductions, softmax, norms, losses).
template <typename ConcreteType>
class Reduces : public TraitBase<ConcreteType, Reduces> {};

/// Op class: a matrix product, whose element-wise consumers can be fused as
/// an epilogue.
template <typename ConcreteType>
class Gemm : public TraitBase<ConcreteType, Gemm> {};

/// Op class: has a kernel family of its own, named by the op's
/// DedicatedKernelOpInterface.
template <typename ConcreteType>
class DedicatedKernel : public TraitBase<ConcreteType, DedicatedKernel> {};

/// Op class: no computation of its own (kiln.fusion, kiln.yield).
template <typename ConcreteType>
class Structural : public TraitBase<ConcreteType, Structural> {};

/// Reads its operands at remapped positions; carries the parameters of its
/// RemapsOperandsOpInterface.
template <typename ConcreteType>
class RemapsOperands : public TraitBase<ConcreteType, RemapsOperands> {};

/// The ScalarEmitter can compute one element of the result from elements of
/// the operands (codegen/cuda/scalar/ScalarEmitter.h).
template <typename ConcreteType>
class ScalarForm : public TraitBase<ConcreteType, ScalarForm> {};

} // namespace mlir::OpTrait::kiln

#endif // KILN_DIALECTS_KILN_IR_KILNTRAITS_H
