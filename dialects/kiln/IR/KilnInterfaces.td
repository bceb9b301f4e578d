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

def Kiln_RemapsOperandsOpInterface : OpInterface<"RemapsOperandsOpInterface"> {
  let cppNamespace = "::mlir::kiln";
  let description = [{
    An op whose result element reads its operands at positions computed from
    the element's own (transpose, slice, flip, pad, concat, reshape, rope,
    embedding) rather than at the element itself. Ops get it, with its
    parameter, from the `Kiln_RemapsOperands` trait list (KilnBase.td).
  }];
  let methods = [
    StaticInterfaceMethod<[{
        Positions of an operand read per result element (rope reads two:
        the element and its rotation partner).
      }],
      "int64_t", "getRemappedReadsPerElement", (ins)>,
  ];
}

def Kiln_DedicatedKernelOpInterface
    : OpInterface<"DedicatedKernelOpInterface"> {
  let cppNamespace = "::mlir::kiln";
  let description = [{
    An op with a kernel family of its own (attention, rnn, convolution,
    pooling, batch norm, embedding gradient): it becomes a `kiln.fusion` of
    that kind by itself. Ops get it from the `Kiln_DedicatedKernel` trait
    list (KilnBase.td), which names the kind.
  }];
  let methods = [
    StaticInterfaceMethod<[{
        The `kind` of the op's `kiln.fusion` (one of
        FusionOp::knownKinds()).
      }],
      "::llvm::StringRef", "getFusionKind", (ins)>,
  ];
}

#endif // KILN_INTERFACES_TD
