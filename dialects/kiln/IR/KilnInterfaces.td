//===- KilnInterfaces.td - op interfaces of the kiln dialect -*- tablegen -*-===//

#ifndef KILN_INTERFACES_TD
#define KILN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Kiln_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::kiln";
  let description = [{
    The reverse-mode gradient rule of an op, carried by the op itself so that
    the autodiff pass needs no table of rules. Given the gradients flowing into
    the op's results, the rule builds IR that computes the gradient of each
    operand. A null Value stands for a zero gradient both ways: a result whose
    gradient is null contributes nothing, and an operand left null receives
    none.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands from `resultGrads` (one per
        result, possibly null) with `builder`, appending exactly one Value (or
        null) per operand to `operandGrads`. Ops without a rule report a
        diagnostic naming themselves.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return $_op->emitOpError("has no gradient rule");
      }]>,
    InterfaceMethod<[{
        Whether gradients flow through this op. Ops with the
        NonDifferentiable trait return false and give a zero gradient.
      }],
      "bool", "isDifferentiable", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return !$_op->template hasTrait<
            ::mlir::OpTrait::kiln::NonDifferentiable>();
      }]>,
  ];
}

#endif // KILN_INTERFACES_TD
