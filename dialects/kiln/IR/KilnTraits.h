//===- KilnTraits.h - native op traits of the kiln dialect ------*- C++ -*-===//

#ifndef KILN_DIALECTS_KILN_IR_KILNTRAITS_H
#define KILN_DIALECTS_KILN_IR_KILNTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::OpTrait::kiln {

/// Marks an op through which no gradient flows (the autodiff pass gives its
/// operands a zero gradient).
template <typename ConcreteType>
class NonDifferentiable : public TraitBase<ConcreteType, NonDifferentiable> {};

} // namespace mlir::OpTrait::kiln

#endif // KILN_DIALECTS_KILN_IR_KILNTRAITS_H
